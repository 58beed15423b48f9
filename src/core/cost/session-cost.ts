/**
 * One session's `chainpress cost` figures, from replays the engine (core/replay) already ran:
 * the recorded bill, the as-run replay and its error, and the chainpress policy against it when
 * one was replayed. Costs in US dollars. Without a chainpress replay every figure that depends on
 * it is null and `chainpressNote` says why: nothing is estimated in its place.
 */

import type { CompressionFigures } from "../replay/compression-events.js";
import type { PriceSource } from "../replay/prices.js";
import type { ReplayResult, ReplaySession } from "../replay/replay.js";

export interface CompressionCost {
  request: number;
  chains: number;
  rewriteCost: number;
  savingPerRequest: number;
  /** Later requests until the saved reads exceed the rewrite; null when they never can. */
  paybackRequests: number | null;
  laterRequests: number;
  paidBack: boolean;
}

export interface SessionCost {
  file: string;
  /** Requests on the branch (assistant messages that carry usage), billed or not. */
  requests: number;
  billedRequests: number;
  /** Requests whose reply recorded no usage: the engine replays them on estimates (prompt, output, list prices). */
  unrecordedRequests: number;
  /** Sum of the recorded `usage.cost.total`. */
  recordedCost: number;
  /** The as-run replay's bill. */
  asRunCost: number;
  /** (asRunCost − recordedCost) / recordedCost; null when nothing was recorded. */
  asRunError: number | null;
  chainpressCost: number | null;
  chainpressNote: string | null;
  /** asRunCost − chainpressCost, and as a share of asRunCost. */
  savingUsd: number | null;
  savingPercent: number | null;
  /** Cache-write tokens the chainpress policy adds over as run (negative: fewer). */
  cacheWritesAdded: number | null;
  compressions: number | null;
  paidBack: number | null;
  neverPaidBack: number | null;
  compressionEvents: CompressionCost[];
  /** Billed requests whose new messages' tokens were estimated (chars / 4), not calibrated. */
  estimatedRequests: number;
  /** Per model: where each price component came from. */
  prices: { model: string; source: Record<"input" | "cacheRead" | "cacheWrite" | "output", PriceSource> }[];
  /** "recorded", "table", "recorded+table" or "unknown": the sources of all models' components together. */
  priceSource: string;
  cacheTtlMinutes: number;
}

export function sessionCost(file: string, session: ReplaySession, asRun: ReplayResult, chainpress: ReplayResult | { note: string }): SessionCost {
  const requests = session.recording.requests;
  const recordedCost = requests.reduce((sum, r) => sum + (r.cost?.total ?? 0), 0);
  const asRunCost = asRun.totals.cost.total;
  const live = "note" in chainpress ? null : chainpress;
  const events = live?.compressions.map(compressionCost) ?? [];
  const prices = [...session.prices.values()].map((p) => ({ model: p.model, source: { ...p.source } }));
  return {
    file,
    requests: requests.length,
    billedRequests: asRun.totals.billedRequests,
    unrecordedRequests: requests.filter((r) => !r.recorded).length,
    recordedCost,
    asRunCost,
    asRunError: recordedCost === 0 ? null : (asRunCost - recordedCost) / recordedCost,
    chainpressCost: live?.totals.cost.total ?? null,
    chainpressNote: "note" in chainpress ? chainpress.note : null,
    savingUsd: live === null ? null : asRunCost - live.totals.cost.total,
    savingPercent: live === null || asRunCost === 0 ? null : (asRunCost - live.totals.cost.total) / asRunCost,
    cacheWritesAdded: live === null ? null : live.totals.cacheWrite - asRun.totals.cacheWrite,
    compressions: live === null ? null : events.length,
    paidBack: live === null ? null : events.filter((e) => e.paidBack).length,
    neverPaidBack: live === null ? null : events.filter((e) => !e.paidBack).length,
    compressionEvents: events,
    estimatedRequests: session.calibration.estimated.length,
    prices,
    priceSource: priceSourceOf(prices),
    cacheTtlMinutes: asRun.cacheTtlMs / 60_000,
  };
}

function compressionCost(f: CompressionFigures): CompressionCost {
  return { request: f.request, chains: f.chains, rewriteCost: f.rewriteCost, savingPerRequest: f.savingPerRequest, paybackRequests: f.paybackRequests, laterRequests: f.laterRequests, paidBack: f.paidBack };
}

function priceSourceOf(prices: SessionCost["prices"]): string {
  const used = new Set<PriceSource>(prices.flatMap((p) => Object.values(p.source)).filter((s) => s !== "unknown"));
  if (used.size === 0) return "unknown";
  return ["recorded", "table"].filter((s) => used.has(s as PriceSource)).join("+");
}
