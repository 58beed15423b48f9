/**
 * Why a chain's spill files could not be written, as a typed error: the compact report's skip
 * reason comes from `reason`, never from the message's text. A chain task stages its files on a
 * worker thread, and an error crossing threads keeps only its message and `cause` (structured
 * clone), so the reason travels in `cause` too and `spillFailureOf` reads it back on either side.
 */

import type { SkipReason } from "../core/prune-types.js";
import { NotRegularFileError } from "./regular-file.js";

/** The skip reasons an I/O failure can give a chain. */
export type WriteFailureReason = Extract<SkipReason, "spill-refused" | "disk-full" | "write-failed">;

const REASONS: ReadonlySet<string> = new Set<WriteFailureReason>(["spill-refused", "disk-full", "write-failed"]);

/** What `cause` holds across threads. */
interface ReasonTag {
  writeFailure: WriteFailureReason;
}

export class SpillWriteError extends Error {
  override readonly name = "SpillWriteError";
  constructor(
    message: string,
    readonly reason: WriteFailureReason,
  ) {
    super(message, { cause: { writeFailure: reason } satisfies ReasonTag });
  }
}

/** A system call error's errno code ("ENOSPC"), if it has one; another error's own `code` (a SessionFileError's "io") is none. */
function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/**
 * What a system call's failure means for the chain it failed: a full disk or quota, or another
 * write failure; undefined for an error that carries no errno code (here or in its `cause`, as a
 * SessionFileError wraps one), which is no I/O failure.
 */
export function ioFailureOf(error: unknown): WriteFailureReason | undefined {
  const code = errnoCode(error) ?? errnoCode((error as { cause?: unknown } | null)?.cause);
  if (code === undefined) return undefined;
  return code === "ENOSPC" || code === "EDQUOT" ? "disk-full" : "write-failed";
}

/** The error as a SpillWriteError, its message kept as it is: a non-regular file in the way is refused, any other failure is one of I/O. */
export function asSpillWriteError(error: unknown): SpillWriteError {
  if (error instanceof SpillWriteError) return error;
  const reason = error instanceof NotRegularFileError ? "spill-refused" : (ioFailureOf(error) ?? "write-failed");
  return new SpillWriteError(error instanceof Error ? error.message : String(error), reason);
}

/** The reason a spill failure carries, on this thread or after it crossed from a worker; undefined for any other error. */
export function spillFailureOf(error: unknown): WriteFailureReason | undefined {
  if (error instanceof SpillWriteError) return error.reason;
  const cause = (error as { cause?: unknown } | null)?.cause as Partial<ReasonTag> | undefined;
  const reason = typeof cause === "object" && cause !== null ? cause.writeFailure : undefined;
  return typeof reason === "string" && REASONS.has(reason) ? (reason as WriteFailureReason) : undefined;
}
