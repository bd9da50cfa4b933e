/**
 * Writing what a command prints, and knowing when it did not arrive: stdout closed by its
 * reader (`teamgames claim … | head -c0`, a reader that exited), a full disk. Shared by
 * `teamgames` and `teamgames-mock`, so neither dies on a raw `EPIPE` stack.
 *
 * @module
 */

/** A stream a command writes to (`process.stdout`, or a test double); `isTTY` is true on a terminal. */
export interface OutputStream {
  /**
   * Writes `text`, then calls `done` once: with the error when the write failed, as
   * Node's streams do. A double that never calls `done` makes {@link writeText} wait forever.
   */
  write(text: string, done?: (error?: Error | null) => void): unknown;
  isTTY?: boolean | undefined;
}

/**
 * Writes `text` and resolves once the stream took it (`undefined`) or failed (the error).
 * Never rejects.
 */
export function writeText(stream: OutputStream, text: string): Promise<Error | undefined> {
  return new Promise((resolve) => {
    try {
      stream.write(text, (error) => resolve(error ?? undefined));
    } catch (error) {
      resolve(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/** A write failure in a few words: its system code (`EPIPE`, `ENOSPC`), else its message. */
export function writeFailure(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : error.message.replace(/\s+/g, ' ').trim();
}

/**
 * Lets a process outlive a failed write to its own stdout or stderr. The failure reaches
 * the writer through {@link writeText}; without a listener Node would also raise it as an
 * unhandled `'error'` event, a stack and exit 1 whatever the command had done.
 */
export function surviveWriteErrors(...streams: Array<{ on(event: 'error', listener: (error: Error) => void): unknown }>): void {
  for (const stream of streams) stream.on('error', () => {});
}
