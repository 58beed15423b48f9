/**
 * How the CLI fails: usage errors exit 2, everything else about a session exits 1, and every
 * failure is one line `chainpress: <file>[:<line>]: <what>` on stderr. Stack traces only with
 * CHAINPRESS_DEBUG=1, because users act on the message, not on our internals.
 */

import { SessionFileError } from "../io/session-errors.js";
import { SessionLockedError } from "../io/session-lock.js";

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Wrong arguments or options (exit 2). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A problem with one session the user can act on; the message already names the file. */
export class CliError extends Error {
  override readonly name = "CliError";
}

/** The message without the `chainpress: ` prefix. Known errors already name file and line. */
export function describeError(error: unknown): string {
  if (error instanceof SessionFileError || error instanceof SessionLockedError || error instanceof CliError || error instanceof UsageError) {
    return error.message;
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    const path = (error as NodeJS.ErrnoException).path;
    // Node's fs messages ("ENOENT: no such file or directory, open 'x'") already carry the path.
    return code && path && !error.message.includes(path) ? `${path}: ${error.message}` : error.message;
  }
  return String(error);
}

/** The stderr text for an error: one line, plus the stack when debugging. */
export function formatError(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const line = `chainpress: ${describeError(error)}`;
  if (env.CHAINPRESS_DEBUG === "1" && error instanceof Error && error.stack) return `${line}\n${error.stack}`;
  return line;
}
