/** The admin sync button and toasts, word for word as docs/product.md gives them (Screens; Error catalogue and toasts). */
export const adminSyncMessages = {
  button: {
    idle: 'Sync to the marketing service',
    syncing: 'Syncing...',
  },
  success: {
    title: 'Sync Successful!',
    /** Used when the server sends no message of its own. */
    fallbackDescription: (synced: number) => `Synced ${synced} emails to the marketing service`,
  },
  failure: {
    title: 'Sync Failed',
    /** The call itself failed and its error carried no message. */
    thrownFallbackDescription: 'Failed to sync emails to the marketing service',
    /** The server answered `success: false` without an error text. */
    unsuccessfulFallbackDescription: 'Sync failed',
  },
} as const;
