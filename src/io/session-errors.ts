/**
 * Errors and warnings raised while reading or writing a pi session file.
 * Every problem names the file and, where it is about one line, the 1-based line number,
 * so a user can open the file at the right place.
 */

/** What went wrong; stable strings that callers and tests may switch on. */
export type SessionErrorCode =
  | "not-found"
  | "empty"
  | "not-a-session"
  | "malformed-line"
  | "truncated-last-line"
  | "invalid-utf8"
  | "duplicate-id"
  | "line-too-long"
  /** Entries glued on one line that pi ignores; raised only when the caller asked to repair them. */
  | "joined-entries"
  | "io";

/** Problems that do not stop a read; the session is still usable. */
export type SessionWarningCode = "truncated-last-line" | "duplicate-id" | "extra-header" | "malformed-line" | "joined-entries" | "unknown-entry-type";

/** A non-fatal problem found while reading a session. */
export interface SessionWarning {
  /** Path of the session file. */
  file: string;
  /** 1-based line number, when the problem is about one line. */
  line?: number;
  /** Kind of problem. */
  code: SessionWarningCode;
  /** Human-readable text, already prefixed with `file:line:`. */
  message: string;
}

/** `<file>:<line>: <what>`, or `<file>: <what>` when no line applies. */
export function formatLocation(file: string, line: number | undefined, what: string): string {
  return line === undefined ? `${file}: ${what}` : `${file}:${line}: ${what}`;
}

/** A session file could not be read or written. */
export class SessionFileError extends Error {
  override readonly name = "SessionFileError";
  /** Path of the session file. */
  readonly file: string;
  /** 1-based line number, when the error is about one line. */
  readonly line: number | undefined;
  /** Kind of problem. */
  readonly code: SessionErrorCode;

  constructor(code: SessionErrorCode, file: string, what: string, line?: number, cause?: unknown) {
    super(formatLocation(file, line, what), cause === undefined ? undefined : { cause });
    this.code = code;
    this.file = file;
    this.line = line;
  }
}

/** Builds a warning with the same message format as errors. */
export function sessionWarning(
  code: SessionWarningCode,
  file: string,
  what: string,
  line?: number,
): SessionWarning {
  const warning: SessionWarning = { file, code, message: formatLocation(file, line, what) };
  if (line !== undefined) warning.line = line;
  return warning;
}

/** `error` as a SessionFileError of code "io" about `file`, saying `what` failed (one already is, as it is). */
export function asIoError(error: unknown, file: string, what: string): SessionFileError {
  if (error instanceof SessionFileError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new SessionFileError("io", file, `${what}: ${reason}`, undefined, error);
}
