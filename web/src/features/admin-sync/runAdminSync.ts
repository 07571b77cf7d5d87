import type { SyncReply } from '@goody/contract';
import type { Backend } from '@/lib/backend';
import type { ToastMessage } from '@/lib/toast/toast';
import { adminSyncMessages } from './adminSyncMessages';

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value.trim() : undefined;

/** Turns the sync reply (or its failure) into the product's toast (docs/product.md, Error catalogue and toasts). */
export function toastForSyncReply(reply: Partial<SyncReply> | null | undefined): ToastMessage {
  if (reply?.success === true) {
    const synced = typeof reply.synced === 'number' && Number.isFinite(reply.synced) ? reply.synced : 0;
    return {
      variant: 'success',
      title: adminSyncMessages.success.title,
      description: text(reply.message) ?? adminSyncMessages.success.fallbackDescription(synced),
    };
  }
  return {
    variant: 'error',
    title: adminSyncMessages.failure.title,
    description: text(reply?.error) ?? adminSyncMessages.failure.unsuccessfulFallbackDescription,
  };
}

export function toastForSyncFailure(error: unknown): ToastMessage {
  const message =
    typeof error === 'object' && error !== null && 'message' in error
      ? text((error as { message: unknown }).message)
      : undefined;
  return {
    variant: 'error',
    title: adminSyncMessages.failure.title,
    description: message ?? adminSyncMessages.failure.thrownFallbackDescription,
  };
}

/** Runs one sync and resolves to the toast to show; it never rejects. */
export async function runAdminSync(loadBackend: () => Promise<Backend>): Promise<ToastMessage> {
  try {
    const backend = await loadBackend();
    return toastForSyncReply(await backend.syncEmailsToMailerlite());
  } catch (error) {
    return toastForSyncFailure(error);
  }
}
