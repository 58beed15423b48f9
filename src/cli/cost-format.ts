/** The text report of `chainpress cost`: one block per session, then totals for several. */

import type { CostTotals } from "../core/cost/cost-totals.js";
import type { SessionCost } from "../core/cost/session-cost.js";
import { digitGroups } from "../core/digit-groups.js";
import { bold } from "./output.js";

const usd = (x: number): string => `$${x.toFixed(2)}`;
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const signedPct = (x: number): string => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(2)}%`;
const signedTokens = (x: number): string => `${x >= 0 ? "+" : "−"}${digitGroups(Math.round(Math.abs(x)))}`;

export function formatSessionCost(s: SessionCost, color: boolean): string {
  const lines = [
    bold(s.file, color),
    `  requests:        ${digitGroups(s.requests)} (${digitGroups(s.estimatedRequests)} estimated); prices: ${s.priceSource}; cache lifetime ${ttlLabel(s.cacheTtlMinutes)}`,
    ...(s.unrecordedRequests > 0 ? [`  no usage:        ${digitGroups(s.unrecordedRequests)} request${s.unrecordedRequests === 1 ? "" : "s"} recorded none; replayed on estimates (characters / 4, list prices)`] : []),
    `  as run:          ${usd(s.recordedCost)} recorded; replayed ${usd(s.asRunCost)}${s.asRunError === null ? " (nothing recorded to check against)" : ` (error ${signedPct(s.asRunError)})`}`,
  ];
  if (s.chainpressCost === null) {
    lines.push(`  chainpress:      ${s.chainpressNote ?? "not available"}`);
    return lines.join("\n");
  }
  lines.push(
    `  chainpress:      ${usd(s.chainpressCost)}; saving ${usd(s.savingUsd!)} (${pct(s.savingPercent ?? 0)}); cache writes ${signedTokens(s.cacheWritesAdded!)} tokens`,
    `  compressions:    ${s.compressions}, ${s.paidBack} paid back, ${s.neverPaidBack} never did`,
    ...s.compressionEvents.map((e) => `    request ${e.request}: ${e.chains} chain${e.chains === 1 ? "" : "s"}, rewrite ${usd(e.rewriteCost)}, payback ${e.paybackRequests === null ? "never" : `${e.paybackRequests} requests`} (${e.laterRequests} followed)${e.paidBack ? "" : ", not paid back"}`),
  );
  return lines.join("\n");
}

export function formatCostTotals(t: CostTotals, failed: number, color: boolean): string {
  const head = bold(`total: ${t.sessions} session${t.sessions === 1 ? "" : "s"}${failed > 0 ? ` (${failed} failed)` : ""}, ${digitGroups(t.requests)} requests (${digitGroups(t.estimatedRequests)} estimated)`, color);
  const asRun = `  as run:          ${usd(t.recordedCost)} recorded; replayed ${usd(t.asRunCost)}${t.asRunError === null ? "" : ` (error ${signedPct(t.asRunError)})`}`;
  const live =
    t.chainpressCost === null
      ? "  chainpress:      not available for every session"
      : `  chainpress:      ${usd(t.chainpressCost)}; saving ${usd(t.savingUsd!)} (${pct(t.savingPercent ?? 0)}); ${t.compressions} compressions, ${t.paidBack} paid back, ${t.neverPaidBack} never did`;
  return [head, asRun, live].join("\n");
}

export function ttlLabel(minutes: number): string {
  return minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}m`;
}
