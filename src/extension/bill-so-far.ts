/**
 * `/pruner status`'s saving so far (issue 47), from the cost replay `chainpress cost` runs: this
 * session's branch replayed without chainpress (pi's own contexts: the as-run policy) and with the
 * chainpress-live policy under the current settings, through the same token counts, prices and
 * cache model. Estimates: a session that ran with chainpress recorded the compressed prompts, so
 * the replay calibrates fewer requests on it than on a session that ran without. The replay runs
 * on pi's thread in one piece, its time growing with the session, so a session file over
 * BILL_REPLAY_MAX_BYTES gets the command that replays it instead.
 */

import { digitGroups } from "../core/digit-groups.js";
import { prepareReplay, replay } from "../core/replay/replay.js";
import type { SessionEntry } from "../core/session-types.js";
import { chainpressLive } from "../main/live-replay-source.js";
import type { ChainpressSettings } from "../core/settings.js";

/** Sessions up to this size are replayed by `/pruner status` (a longer stall than that belongs to `chainpress cost`). */
export const BILL_REPLAY_MAX_BYTES = 16 * 1024 * 1024;

export interface BillSoFar {
  requests: number;
  /** The replayed bills, in US dollars, and their prompt tokens. */
  without: { cost: number; promptTokens: number };
  with: { cost: number; promptTokens: number };
  cacheTtlMinutes: number;
}

export function billSoFar(branch: readonly SessionEntry[], settings: ChainpressSettings): BillSoFar {
  const session = prepareReplay(branch);
  const cacheTtlMs = settings.chainCompression.cacheTtlSeconds * 1000;
  const without = replay(session, { kind: "as-run" }, { cacheTtlMs }).totals;
  const live = replay(session, { kind: "source", source: chainpressLive(settings) }, { cacheTtlMs }).totals;
  return {
    requests: session.recording.requests.length,
    without: { cost: without.cost.total, promptTokens: without.promptTokens },
    with: { cost: live.cost.total, promptTokens: live.promptTokens },
    cacheTtlMinutes: cacheTtlMs / 60_000,
  };
}

/** The line for a session too large to replay on pi's thread. */
export function billTooLargeLine(file: string, bytes: number): string {
  return `saving so far: not replayed here (${(bytes / 1e6).toFixed(0)} MB session); run: chainpress cost ${JSON.stringify(file)}`;
}

/** "saving so far: ~1,234,567 prompt tokens, $12.34 (41.2%) over 210 requests (replayed: $29.95 without chainpress, $17.61 with; 5-minute cache)". */
export function billSoFarLine(bill: BillSoFar): string {
  if (bill.requests === 0) return "saving so far: no requests yet";
  const saved = bill.without.cost - bill.with.cost;
  const share = bill.without.cost > 0 ? ` (${((100 * saved) / bill.without.cost).toFixed(1)}%)` : "";
  const tokens = digitGroups(Math.round(bill.without.promptTokens - bill.with.promptTokens));
  const ttl = bill.cacheTtlMinutes >= 60 ? `${bill.cacheTtlMinutes / 60}-hour` : `${bill.cacheTtlMinutes}-minute`;
  return `saving so far: ~${tokens} prompt tokens, $${saved.toFixed(2)}${share} over ${digitGroups(bill.requests)} requests (replayed: $${bill.without.cost.toFixed(2)} without chainpress, $${bill.with.cost.toFixed(2)} with; ${ttl} cache)`;
}
