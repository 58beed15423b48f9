/**
 * A `chainpress cost` run's totals over its sessions. A chainpress figure is totalled only when
 * every session has one (a total over some sessions would read as the whole folder's).
 */

import type { SessionCost } from "./session-cost.js";

export interface CostTotals {
  sessions: number;
  requests: number;
  unrecordedRequests: number;
  recordedCost: number;
  asRunCost: number;
  asRunError: number | null;
  chainpressCost: number | null;
  savingUsd: number | null;
  savingPercent: number | null;
  cacheWritesAdded: number | null;
  compressions: number | null;
  paidBack: number | null;
  neverPaidBack: number | null;
  estimatedRequests: number;
}

export function costTotals(sessions: readonly SessionCost[]): CostTotals {
  const sum = (f: (s: SessionCost) => number): number => sessions.reduce((a, s) => a + f(s), 0);
  const all = sessions.length > 0 && sessions.every((s) => s.chainpressCost !== null);
  const sumLive = (f: (s: SessionCost) => number | null): number | null => (all ? sum((s) => f(s) ?? 0) : null);
  const recordedCost = sum((s) => s.recordedCost);
  const asRunCost = sum((s) => s.asRunCost);
  const chainpressCost = sumLive((s) => s.chainpressCost);
  return {
    sessions: sessions.length,
    requests: sum((s) => s.requests),
    unrecordedRequests: sum((s) => s.unrecordedRequests),
    recordedCost,
    asRunCost,
    asRunError: recordedCost === 0 ? null : (asRunCost - recordedCost) / recordedCost,
    chainpressCost,
    savingUsd: chainpressCost === null ? null : asRunCost - chainpressCost,
    savingPercent: chainpressCost === null || asRunCost === 0 ? null : (asRunCost - chainpressCost) / asRunCost,
    cacheWritesAdded: sumLive((s) => s.cacheWritesAdded),
    compressions: sumLive((s) => s.compressions),
    paidBack: sumLive((s) => s.paidBack),
    neverPaidBack: sumLive((s) => s.neverPaidBack),
    estimatedRequests: sum((s) => s.estimatedRequests),
  };
}
