// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { injectPrerendered } from './prerender';

const template = `<!doctype html>
<html lang="en">
  <head>
    <title>GOODY</title>
    <script type="module" crossorigin src="/assets/index-abc.js"></script>
  </head>
  <body>
    <div id="root"></div>
  </body>
</html>
`;

describe('injectPrerendered', () => {
  const page = {
    html: '<main><h1>Hello</h1></main>',
    head: '<style data-emotion="goody 1a">.goody-1a{color:red;}</style>',
  };

  it('puts the markup inside #root and the style elements at the end of <head>, leaving scripts alone', () => {
    const html = injectPrerendered(template, page);
    expect(html).toContain('<div id="root"><main><h1>Hello</h1></main></div>');
    expect(html).toMatch(
      /<\/script>\s*<style data-emotion="goody 1a">\.goody-1a\{color:red;\}<\/style>\s*<\/head>/,
    );
    expect(html).toContain('<script type="module" crossorigin src="/assets/index-abc.js"></script>');
    expect(html).not.toMatch(/<script>/);
  });

  it('copies the page literally, even text that looks like a replacement pattern', () => {
    const html = injectPrerendered(template, { html: "<p>$& $' $1 $$</p>", head: '' });
    expect(html).toContain('<div id="root"><p>$& $\' $1 $$</p></div>');
  });

  it('refuses a template without exactly one empty #root, or without </head>, and an empty render', () => {
    expect(() => injectPrerendered(template.replace('<div id="root"></div>', ''), page)).toThrow(/found 0/);
    expect(() =>
      injectPrerendered(template.replace('<div id="root"></div>', '<div id="root"></div>'.repeat(2)), page),
    ).toThrow(/found 2/);
    expect(() => injectPrerendered(template.replace('</head>', ''), page)).toThrow(/no <\/head>/);
    expect(() => injectPrerendered(template, { html: ' ', head: '' })).toThrow(/no markup/);
  });
});
