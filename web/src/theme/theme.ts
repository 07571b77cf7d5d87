import { createTheme } from '@mui/material/styles';
import { components } from './components';
import { colors, radii } from './tokens';
import { typography } from './typography';

export const theme = createTheme({
  palette: {
    mode: 'light',
    primary: { main: colors.violet, dark: colors.violetDark, contrastText: colors.white },
    secondary: { main: colors.sunshine, contrastText: colors.ink },
    success: { main: colors.successSurface, contrastText: colors.white },
    error: { main: colors.errorSurface, contrastText: colors.white },
    text: { primary: colors.ink, secondary: colors.inkMuted },
    background: { default: colors.white, paper: colors.white },
    divider: colors.lavenderLine,
  },
  shape: { borderRadius: radii.control },
  typography,
  components,
});
