import { VISUALLY_HIDDEN_RULE } from '@/lib/styleSheet';
import { colors, focusRing, radii } from '@/theme/tokens';

/** The toasts' look in plain CSS from the theme's tokens, so the toast layer hydrates without MUI. */
export const TOAST_CSS = `
.goody-toast{display:flex;align-items:flex-start;gap:12px;width:100%;max-width:420px;box-sizing:border-box;
padding:12px 8px 12px 16px;border-radius:${radii.control}px;color:${colors.white};line-height:1.6;
box-shadow:0 12px 32px rgba(26,16,51,0.28)}
.goody-toast--success{background:${colors.successSurface}}
.goody-toast--error{background:${colors.errorSurface}}
.goody-toast__icon{width:22px;height:22px;flex-shrink:0;margin-top:1px;fill:currentColor}
.goody-toast__text{flex:1;min-width:0}
.goody-toast__title{margin:0;font-weight:700;line-height:1.4}
.goody-toast__description{margin:2px 0 0;font-size:0.9375rem;line-height:1.45}
.goody-toast__close{display:inline-flex;align-items:center;justify-content:center;flex-shrink:0;width:32px;height:32px;
margin:-4px 0 0;padding:0;border:0;border-radius:50%;background:transparent;color:inherit;cursor:pointer}
.goody-toast__close:hover{background:rgba(255,255,255,0.12)}
.goody-toast__close:focus-visible{outline:${focusRing.outline};outline-offset:${focusRing.outlineOffset};box-shadow:${focusRing.boxShadow}}
.goody-toast__close svg{width:18px;height:18px;fill:currentColor}
${VISUALLY_HIDDEN_RULE}
`.replace(/\n/g, '');
