import { describe, expect, it } from 'vitest';
import { colors, contrastPairs, contrastRatio } from './tokens';

describe('palette contrast (WCAG 2.2 AA)', () => {
  it('computes ratios as WCAG defines them', () => {
    expect(contrastRatio('#000000', '#FFFFFF')).toBeCloseTo(21, 5);
    expect(contrastRatio('#FFFFFF', '#FFFFFF')).toBeCloseTo(1, 5);
    // #767676 on white is the well-known darkest grey that just passes 4.5:1.
    expect(contrastRatio('#767676', '#FFFFFF')).toBeCloseTo(4.54, 2);
  });

  it.each(contrastPairs)(
    '$text on $background reaches $minimum:1 ($use)',
    ({ text, background, minimum }) => {
      expect(contrastRatio(colors[text], colors[background])).toBeGreaterThanOrEqual(minimum);
    },
  );
});
