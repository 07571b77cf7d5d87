import createCache, { type EmotionCache } from '@emotion/cache';

/**
 * The key of every Emotion class and style element, shared by the build-time prerender and the browser.
 * The browser's cache adopts the prerendered `<style data-emotion="goody ...">` elements with that key
 * instead of inserting the same rules again, so hydration changes no style and nothing shifts.
 */
export const EMOTION_KEY = 'goody';

export function createEmotionCache(): EmotionCache {
  return createCache({ key: EMOTION_KEY });
}
