// Reference (a): a static snapshot of the landing page, the physical limit for this content. Chromium renders
// the built page; the snapshot keeps its DOM and every style rule in force (Emotion inserts its rules through
// the CSSOM, so they are copied out of the style sheets) and drops every script, script preload and prefetch.
// Reference (c) is the same snapshot with one empty module script: what any JavaScript at all costs.
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

/** Copies the site's other public files (favicon, robots.txt), so pages and audits see the same site. */
function copyPublicFiles(sourceDir: string, outDir: string): void {
  for (const entry of readdirSync(sourceDir, { withFileTypes: true })) {
    if (entry.isFile() && !entry.name.endsWith('.html')) {
      copyFileSync(path.join(sourceDir, entry.name), path.join(outDir, entry.name));
    }
  }
}

export async function snapshotPage(options: {
  url: string;
  chromiumPath: string;
  chromiumArgs: string[];
}): Promise<string> {
  const browser = await chromium.launch({ executablePath: options.chromiumPath, args: options.chromiumArgs });
  try {
    const page = await browser.newPage({ viewport: { width: 412, height: 823 } });
    // A hydration mismatch is reported on the console (React's recoverable errors), not thrown: the
    // snapshot, and the whole bench, refuse a page that logs an error.
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(options.url, { waitUntil: 'networkidle' });
    await page.waitForSelector('main h1');
    if (errors.length > 0)
      throw new Error(`${options.url} logged errors while loading:\n${errors.join('\n')}`);
    return await page.evaluate(() => {
      for (const style of Array.from(document.querySelectorAll('style'))) {
        const rules = style.sheet ? Array.from(style.sheet.cssRules, (rule) => rule.cssText) : [];
        style.textContent = rules.join('\n');
      }
      for (const node of Array.from(
        document.querySelectorAll('script, link[rel="modulepreload"], link[rel="prefetch"]'),
      )) {
        node.remove();
      }
      return `<!doctype html>\n${document.documentElement.outerHTML}`;
    });
  } finally {
    await browser.close();
  }
}

export function writeSite(
  html: string,
  sourceDir: string,
  outDir: string,
  files: Record<string, string> = {},
) {
  mkdirSync(path.join(outDir, 'assets'), { recursive: true });
  writeFileSync(path.join(outDir, 'index.html'), html);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(outDir, name), content);
  copyPublicFiles(sourceDir, outDir);
}

/** The snapshot with one empty module script where the built page has its entry script. */
export function withEmptyScript(html: string): { html: string; files: Record<string, string> } {
  const tag = '<script type="module" crossorigin src="/assets/empty.js"></script>';
  const at = html.indexOf('<style');
  if (at < 0) throw new Error('the snapshot has no <style> element to put the script before');
  return { html: `${html.slice(0, at)}${tag}${html.slice(at)}`, files: { 'assets/empty.js': '' } };
}
