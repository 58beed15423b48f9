/**
 * Waits until pi has written a message to the session. `message_end` fires before pi persists the
 * message (pi appends it right after the handlers return), and `pi.appendEntry` writes at the
 * current leaf, so an entry appended from `message_end` would land BEFORE the chain's closing
 * assistant message. If pi then died, the file would hold a chain entry whose closing message
 * does not exist: the chain could never render or be recompressed. So flush appends wait here
 * until the closing message is on the branch; `turn_end` and `agent_end` (queued after the
 * persistence step) poke the gate.
 */

import type { SessionView } from "./session-view.js";
import type { AgentMessage } from "../core/session-types.js";

/** pi appends at the leaf; the closing message is at most a few entries behind it at turn_end. */
const LEAF_SCAN_LIMIT = 64;

interface Waiter {
  message: AgentMessage;
  sessionManager: SessionView;
  resolve: (persisted: boolean) => void;
}

export class PersistGate {
  private waiters: Waiter[] = [];

  /** True once `message` is on the branch; false if the session ends first. */
  persisted(message: AgentMessage | undefined, sessionManager: SessionView): Promise<boolean> {
    if (!message || isNearLeaf(sessionManager, message)) return Promise.resolve(true);
    return new Promise((resolve) => this.waiters.push({ message, sessionManager, resolve }));
  }

  /** Re-check waiters; called where pi has persisted everything that came before. */
  poke(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (!isNearLeaf(waiter.sessionManager, waiter.message)) return true;
      waiter.resolve(true);
      return false;
    });
  }

  /** The session is going away: whatever is still unpersisted will stay so. */
  releaseAll(): void {
    this.poke();
    for (const waiter of this.waiters) waiter.resolve(false);
    this.waiters = [];
  }
}

/** Same role and timestamp: pi may hand handlers a copy, so identity is not reliable. */
function isNearLeaf(sessionManager: SessionView, message: AgentMessage): boolean {
  let entry = sessionManager.getLeafEntry();
  for (let i = 0; entry && i < LEAF_SCAN_LIMIT; i++) {
    if (entry.type === "message" && entry.message.role === message.role && entry.message.timestamp === message.timestamp) return true;
    entry = entry.parentId === null ? undefined : sessionManager.getEntry(entry.parentId);
  }
  return false;
}
