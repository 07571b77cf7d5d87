// `npm run og-image`: draws web/public/og-image.png, the 1200x630 picture a link to the site shows in a chat
// or a feed (og:image), from the page's own colours and headline (src/theme/tokens.ts, src/content/landing.ts)
// and its favicon, with Debian's Chromium. The PNG is committed: run this again when the headline or the
// colours change.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumArgs, findChromium } from '../../tests/e2e/chromium.ts';
import { hero } from '../src/content/landing.ts';
import { colors, nightGradient } from '../src/theme/tokens.ts';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(webDir, 'public', 'og-image.png');

const favicon = readFileSync(path.join(webDir, 'public', 'favicon.svg')).toString('base64');
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const html = `<!doctype html><html><head><style>
  html, body { margin: 0; width: 1200px; height: 630px; }
  body { background: ${nightGradient}; color: ${colors.onNight}; font-family: 'DejaVu Sans', Arial, sans-serif;
    display: flex; flex-direction: column; justify-content: center; padding: 0 96px; box-sizing: border-box; }
  .brand { display: flex; align-items: center; gap: 20px; font-size: 44px; font-weight: 800; letter-spacing: 2px; }
  .brand img { width: 72px; height: 72px; }
  h1 { font-size: 68px; line-height: 1.1; margin: 40px 0 28px; font-weight: 800; }
  h1 span { color: ${colors.sunshine}; }
  p { font-size: 30px; margin: 0; color: ${colors.onNightMuted}; }
</style></head><body>
  <div class="brand"><img src="data:image/svg+xml;base64,${favicon}" alt="">GOODY</div>
  <h1>${escapeHtml(hero.title.lead)}<span>${escapeHtml(hero.title.highlight)}</span></h1>
  <p>${escapeHtml(hero.badge)} · Join the waitlist</p>
</body></html>`;

const executablePath = findChromium();
if (!executablePath)
  throw new Error('og-image needs Chromium: install the Debian package chromium, or set CHROMIUM_PATH.');
const browser = await chromium.launch({ executablePath, args: chromiumArgs });
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 630 } });
  await page.setContent(html, { waitUntil: 'load' });
  await page.screenshot({ path: out, type: 'png' });
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await browser.close();
}
