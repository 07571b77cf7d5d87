import { describe, expect, it, vi } from 'vitest';
import { registerToastLayer, showToast, type ToastMessage } from './toast';

const message = (title: string): ToastMessage => ({ variant: 'success', title, description: 'd' });

describe('showToast', () => {
  it('keeps a toast shown before the layer is there, and hands it over once, when the layer registers', () => {
    showToast(message('early'));
    const draw = vi.fn();
    const remove = registerToastLayer(draw);
    expect(draw.mock.calls).toEqual([[message('early')]]);
    showToast(message('later'));
    expect(draw.mock.calls).toEqual([[message('early')], [message('later')]]);
    remove();
    const next = vi.fn();
    registerToastLayer(next)();
    expect(next).not.toHaveBeenCalled();
  });
});
