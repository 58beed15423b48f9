/**
 * Waits until pi has written a message to the session. `message_end` fires before pi persists the
 * message (pi appends it right after the handlers return), and `pi.appendEntry` writes at the
 * current leaf, so an entry appended from `message_end` would land BEFORE the chain's closing
 * assistant message. If pi then died, the file would hold a chain entry whose closing message
 * does not exist: the chain could never render or be recompressed. So flush appends wait here
 * until the closing message is on the branch.
 *
 * The message is looked for on the whole active branch, not only near the leaf: while a long
 * first flush runs, pi may append any number of entries (a new run of tool calls) after it.
 * `turn_end` and `agent_end` (queued after the persistence step) poke the gate, and a timer
 * re-checks in between, so nothing depends on an event pi might not send. Every wait is bounded:
 * a message that never shows up (pi aborted, the run was replaced) resolves as not persisted
 * after `timeoutMs`, and the flush waiting on it gives up instead of holding the queue forever.
 */

import type { SessionView } from "./session-view.js";
import type { AgentMessage } from "../core/session-types.js";

/** How long a flush waits for pi to persist its closing reply before giving up. */
export const DEFAULT_PERSIST_TIMEOUT_MS = 60_000;

/** Re-check interval between pokes. */
const RECHECK_MS = 250;

interface Waiter {
  message: AgentMessage;
  sessionManager: SessionView;
  since: number;
  settle: (persisted: boolean) => void;
}

export class PersistGate {
  private waiters = new Set<Waiter>();

  constructor(private readonly timeoutMs = DEFAULT_PERSIST_TIMEOUT_MS) {}

  /** True once `message` is on the branch; false if the session ends first or the wait times out. */
  persisted(message: AgentMessage | undefined, sessionManager: SessionView): Promise<boolean> {
    if (!message || isOnBranch(sessionManager, message)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const recheck = setInterval(() => {
        if (isOnBranch(sessionManager, message)) waiter.settle(true);
      }, RECHECK_MS);
      const deadline = setTimeout(() => waiter.settle(false), this.timeoutMs);
      // Neither timer may keep a print-mode pi alive after its run.
      recheck.unref();
      deadline.unref();
      const waiter: Waiter = {
        message,
        sessionManager,
        since: Date.now(),
        settle: (persisted) => {
          clearInterval(recheck);
          clearTimeout(deadline);
          this.waiters.delete(waiter);
          resolve(persisted);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Re-check waiters; called where pi has persisted everything that came before. */
  poke(): void {
    for (const waiter of [...this.waiters]) if (isOnBranch(waiter.sessionManager, waiter.message)) waiter.settle(true);
  }

  /** The session is going away: whatever is still unpersisted will stay so. */
  releaseAll(): void {
    this.poke();
    for (const waiter of [...this.waiters]) waiter.settle(false);
  }

  /** When the oldest pending wait began (undefined when nothing waits): what a busy command reports. */
  waitingSince(): number | undefined {
    let oldest: number | undefined;
    for (const waiter of this.waiters) oldest = oldest === undefined ? waiter.since : Math.min(oldest, waiter.since);
    return oldest;
  }

  get timeout(): number {
    return this.timeoutMs;
  }
}

/**
 * The same object, or the same role and timestamp: when another extension's `message_end`
 * handler replaced the message, pi persists its original object with the replacement's fields,
 * so identity alone would miss it. The walk covers the whole branch, root included; the visited
 * set stops it on a corrupt parent cycle.
 */
function isOnBranch(sessionManager: SessionView, message: AgentMessage): boolean {
  const visited = new Set<string>();
  let entry = sessionManager.getLeafEntry();
  while (entry && !visited.has(entry.id)) {
    visited.add(entry.id);
    if (entry.type === "message" && (entry.message === (message as unknown) || (entry.message.role === message.role && entry.message.timestamp === message.timestamp))) return true;
    entry = entry.parentId === null ? undefined : sessionManager.getEntry(entry.parentId);
  }
  return false;
}
