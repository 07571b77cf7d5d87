/** A failure the launcher explains in words: printed as it is, without a stack trace. */
export class LauncherError extends Error {
  constructor(
    message: string,
    /** Process exit code: 2 for a problem with how it was started (a port, an argument), 1 otherwise. */
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'LauncherError';
  }
}
