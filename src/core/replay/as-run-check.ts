/**
 * The model check: the as-run replay against the recorded bill. Its total and split come from
 * the replay as configured (lost caches as an expectation, cache-model.ts); the requests are
 * compared one by one on a replay that loses no cache. A request is
 * a miss when its replayed cache read or write differs from the recording's by more than
 * MISS_TOKENS; each miss says why, as far as the recording shows. `provider-miss` is a request
 * the recording billed as a cache miss although the request before it was recent, of the same
 * model, and a prefix of it: the provider's cache eviction, which no replay can predict;
 * `thinking-change` is such a miss after pi's thinking level changed (Anthropic voids cached
 * messages then, but not always in the recordings). The check's `modelled` figures leave those
 * two kinds out on both sides; everything else counts. A request without recorded usage has no
 * bill to compare with: it is in `replayed` only.
 */

import type { EstimateReason } from "./calibrate.js";
import type { CostSplit } from "./recording.js";
import { replay, type ReplaySession, type ReplaySettings } from "./replay.js";

export const MISS_TOKENS = 64;

export type MissReason = "provider-miss" | "thinking-change" | "read-more-than-modelled" | `estimated:${EstimateReason}` | "other";

export interface RequestMiss {
  request: number;
  entryId: string;
  /** Seconds since the request before. */
  gapSeconds: number;
  recorded: { input: number; cacheRead: number; cacheWrite: number; cost: number };
  replayed: { input: number; cacheRead: number; cacheWrite: number; cost: number };
  reason: MissReason;
}

export interface AsRunCheck {
  recorded: CostSplit;
  /** The as-run replay's bill with the given settings. */
  replayed: CostSplit;
  /** (replayed − recorded) / recorded total. */
  error: number;
  /** Recorded and replayed (no cache lost) without the requests where the recording lost it. */
  modelled: { recorded: CostSplit; replayed: CostSplit; error: number };
  misses: RequestMiss[];
}

export function checkAsRun(session: ReplaySession, settings: ReplaySettings = {}): AsRunCheck {
  const { recording, calibration } = session;
  const estimated = new Map(calibration.estimated.map((e) => [e.request, e.reason]));
  const check: AsRunCheck = { recorded: zeroCost(), replayed: replay(session, { kind: "as-run" }, settings).totals.cost, error: 0, modelled: { recorded: zeroCost(), replayed: zeroCost(), error: 0 }, misses: [] };
  const result = replay(session, { kind: "as-run" }, { ...settings, lostCaches: "none" });
  let previousTime: number | undefined;
  for (const request of recording.requests) {
    if (!request.recorded) continue; // no recorded bill to compare with
    const figures = result.requests[request.index]!;
    const recorded = request.cost ?? zeroCost();
    add(check.recorded, recorded);
    const gapSeconds = previousTime === undefined ? 0 : (request.time - previousTime) / 1000;
    if (request.billed) previousTime = request.time;
    const off = Math.abs(figures.cacheRead - request.tokens.cacheRead) > MISS_TOKENS || Math.abs(figures.cacheWrite - request.tokens.cacheWrite) > MISS_TOKENS;
    const reason = off ? reasonOf(request.tokens.cacheRead, figures.cacheRead, estimated.get(request.index), request.thinkingChanged) : undefined;
    if (reason !== "provider-miss" && reason !== "thinking-change") {
      add(check.modelled.recorded, recorded);
      add(check.modelled.replayed, figures.cost);
    }
    if (reason === undefined) continue;
    const t = request.tokens;
    check.misses.push({
      request: request.index,
      entryId: request.entryId,
      gapSeconds,
      recorded: { input: t.input, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite, cost: recorded.total },
      replayed: { input: figures.input, cacheRead: figures.cacheRead, cacheWrite: figures.cacheWrite, cost: figures.cost.total },
      reason,
    });
  }
  check.error = relative(check.replayed.total, check.recorded.total);
  check.modelled.error = relative(check.modelled.replayed.total, check.modelled.recorded.total);
  return check;
}

function reasonOf(recordedRead: number, replayedRead: number, estimate: EstimateReason | undefined, thinkingChanged: boolean): MissReason {
  if (replayedRead > 0 && recordedRead < replayedRead / 2) return thinkingChanged ? "thinking-change" : "provider-miss";
  if (estimate !== undefined && estimate !== "first-request") return `estimated:${estimate}`;
  if (recordedRead > replayedRead) return "read-more-than-modelled";
  return "other";
}

function relative(value: number, reference: number): number {
  return reference === 0 ? (value === 0 ? 0 : Infinity) : (value - reference) / reference;
}

function add(into: CostSplit, from: CostSplit): void {
  into.input += from.input;
  into.cacheRead += from.cacheRead;
  into.cacheWrite += from.cacheWrite;
  into.output += from.output;
  into.total += from.total;
}

function zeroCost(): CostSplit {
  return { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: 0 };
}
