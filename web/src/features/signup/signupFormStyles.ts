import { VISUALLY_HIDDEN_RULE } from '@/lib/styleSheet';
import { colors, focusRing, radii } from '@/theme/tokens';
import { fontFamily } from '@/theme/typography';

const ring = `outline:${focusRing.outline};outline-offset:${focusRing.outlineOffset}`;

/**
 * The sign-up form's look, in plain CSS from the theme's tokens: the same field and button the MUI theme
 * draws (an outlined field, a large contained button in the call-to-action colour), without MUI, so the
 * form hydrates without a styling runtime. On the dark gradient (`data-tone="onDark"`) the texts are light.
 */
export const SIGNUP_FORM_CSS = `
.goody-signup{width:100%;max-width:520px;color:${colors.ink}}
.goody-signup[data-tone=onDark]{color:${colors.onNight}}
.goody-signup__label{display:block;margin-bottom:8px;font-weight:700}
.goody-signup__row{display:flex;flex-direction:column;gap:12px}
.goody-signup__field{flex:none;min-width:0;box-sizing:border-box;height:56px;margin:0;padding:0 13px;
border:1px solid ${colors.inkMuted};border-radius:${radii.control}px;background:${colors.white};color:${colors.ink};
font:400 1rem/1.4375em ${fontFamily};-webkit-appearance:none;appearance:none}
@media (min-width:600px){.goody-signup__row{flex-direction:row}.goody-signup__field{flex:1}}
.goody-signup__field::placeholder{color:${colors.inkMuted};opacity:1}
.goody-signup__field:hover{border-color:${colors.ink}}
.goody-signup__field:focus{border-color:${colors.violet};box-shadow:inset 0 0 0 1px ${colors.violet},${focusRing.boxShadow};${ring}}
.goody-signup__button{display:inline-flex;align-items:center;justify-content:center;gap:8px;flex-shrink:0;
box-sizing:border-box;min-height:48px;min-width:64px;margin:0;padding:8px 24px;border:0;border-radius:${radii.pill}px;
background:${colors.sunshine};color:${colors.ink};font:700 0.9375rem/1.75 ${fontFamily};white-space:nowrap;
cursor:pointer;transition:background-color 250ms cubic-bezier(0.4,0,0.2,1)}
@media (hover:hover){.goody-signup__button:hover{background:#FFE07A}}
.goody-signup__button:focus-visible{${ring};box-shadow:${focusRing.boxShadow}}
.goody-signup__button:disabled{background:#F3E3A6;color:${colors.ink};cursor:default}
.goody-signup__spinner{width:16px;height:16px;box-sizing:border-box;border:2px solid currentColor;border-right-color:transparent;
border-radius:50%;animation:goody-spin 0.8s linear infinite}
@keyframes goody-spin{to{transform:rotate(360deg)}}
.goody-signup__notice{margin:10px 0 0;font-weight:700}
.goody-signup__notice:empty{margin-top:0}
.goody-signup__hint{margin:10px 0 0;font-size:0.875rem;color:${colors.inkMuted}}
.goody-signup[data-tone=onDark] .goody-signup__hint{color:${colors.onNightMuted}}
${VISUALLY_HIDDEN_RULE}
`.replace(/\n/g, '');
