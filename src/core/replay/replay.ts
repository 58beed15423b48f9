/**
 * The replay: a session prepared once (requests, as-run contexts, calibrated tokens, prices, the
 * typical uncached tail), then any policy's contexts through the same token counts and cache
 * model, request by request. Linear in the session: each context costs what it changes.
 */

import type { SessionEntry } from "../session-types.js";
import { cacheSplit, CACHE_TTL_5M_MS, typicalTail, type CacheMark } from "./cache-model.js";
import { calibrate, type Calibration } from "./calibrate.js";
import { CompressionLedger, type CompressionFigures } from "./compression-events.js";
import { EMPTY_CONTEXT, nextContext, sharedLength, type ContextRef } from "./context-store.js";
import { policyName, type ReplayEnvironment, type ReplayPolicy } from "./policy.js";
import { contextWindowOf, pricesForTtl, sessionPrices, type ModelPrices, type TokenPrices } from "./prices.js";
import { recordingOf, type CostSplit, type Recording, type TokenSplit } from "./recording.js";
import { lostCaches, lostShareOf, noLostCaches, type LostCaches } from "./lost-caches.js";

/** A session ready to replay under any policy. */
export interface ReplaySession {
  recording: Recording;
  calibration: Calibration;
  prices: Map<string, ModelPrices>;
  /** Input tokens billed after the cache breakpoint on each cached request (cache-model.ts). */
  uncachedTail: number;
  /** How much the recording lost of the cache, after a user's prompt and in a tool loop (cache-model.ts "Lost caches"). */
  lostCaches: LostCaches;
}

export interface ReplaySettings {
  /** The cache's lifetime (default 5 minutes; CACHE_TTL_1H_MS for 1 hour, whose writes Anthropic bills at 2× input: prices.ts). */
  cacheTtlMs?: number;
  /** "expected" (default): the session's shares of lost caches, as an expectation; "none": no cache is lost. */
  lostCaches?: "expected" | "none";
}

export interface RequestFigures extends TokenSplit {
  request: number;
  entryId: string;
  time: number;
  model: string;
  /** input + cacheRead + cacheWrite. */
  promptTokens: number;
  cost: CostSplit;
  /** False for a request that recorded no tokens (aborted before any): figures all 0. */
  billed: boolean;
}

export interface ReplayResult {
  policy: string;
  cacheTtlMs: number;
  requests: RequestFigures[];
  totals: TokenSplit & { promptTokens: number; billedRequests: number; cost: CostSplit };
  compressions: CompressionFigures[];
  /** Distinct messages this policy's contexts held whose tokens are estimated (not calibrated). */
  estimatedMessages: number;
  /** Requests whose recorded prompt the calibration could not use (calibrate.ts; the first request's is exact by definition and not counted). */
  estimatedRequests: number;
  /** The prices used, per model, each component saying whether it came from the recording or the built-in table. */
  prices: ModelPrices[];
}

/** Prepares a branch (root → leaf, core/session-tree.ts `buildBranch`) for replays. */
export function prepareReplay(branch: readonly SessionEntry[]): ReplaySession {
  const recording = recordingOf(branch);
  const calibration = calibrate(recording);
  const session = { recording, calibration, prices: sessionPrices(recording.requests), uncachedTail: typicalTail(recording.requests), lostCaches: noLostCaches() };
  session.lostCaches = lostCaches(recording, replay(session, { kind: "as-run" }, { lostCaches: "none" }).requests);
  return session;
}

export function replay(session: ReplaySession, policy: ReplayPolicy, settings: ReplaySettings = {}): ReplayResult {
  const { recording, calibration, prices, uncachedTail } = session;
  const { table } = recording;
  const ttlMs = settings.cacheTtlMs ?? CACHE_TTL_5M_MS;
  const lost = settings.lostCaches === "none" ? noLostCaches() : session.lostCaches;
  const tokensOf = table.tokensOf.bind(table);
  const tokens = (context: ContextRef, length = context.length): number => calibration.base + context.segment.tokensUpTo(length, tokensOf);
  const contexts = contextsOf(session, policy, replayEnvironment(session, ttlMs));
  const ledger = new CompressionLedger();
  const result: ReplayResult = { policy: policyName(policy), cacheTtlMs: ttlMs, requests: [], totals: { ...zeroTokens(), promptTokens: 0, billedRequests: 0, cost: zeroCost() }, compressions: [], estimatedMessages: 0, estimatedRequests: calibration.estimated.filter((e) => e.reason !== "first-request").length, prices: [...prices.values()] };
  const counted = new Set<number>();
  let previous: { context: ContextRef; asRun: ContextRef; mark: CacheMark } | undefined;
  let chainsPending = 0;
  for (const { context, chains, request } of contexts(recording)) {
    chainsPending += chains;
    if (!request.billed) {
      result.requests.push({ request: request.index, entryId: request.entryId, time: request.time, model: request.model, ...zeroTokens(), promptTokens: 0, cost: zeroCost(), billed: false });
      continue;
    }
    const model = prices.get(request.model)!;
    const rates = pricesForTtl(model, ttlMs, CACHE_TTL_5M_MS);
    const promptTokens = tokens(context);
    const shared = previous === undefined ? 0 : sharedLength(previous.context, context);
    countEstimated(context, shared, counted, table, result);
    const sharedTokens = previous === undefined ? 0 : tokens(context, shared);
    const cacheRequest = { time: request.time, model: request.model, promptTokens, sharedTokens, baseTokens: calibration.base, lostChance: lostShareOf(lost, request) };
    const { split, mark } = cacheSplit(cacheRequest, previous?.mark, { ttlMs, uncachedTail, minCacheTokens: model.minCacheTokens, reads: model.cacheReads });
    const asRun = recording.contexts[request.index]!;
    if (previous !== undefined && shared < previous.context.length) {
      const grown = tokens(asRun) - tokens(asRun, sharedLength(previous.asRun, asRun));
      ledger.rewrite({ request: request.index, chains: chainsPending, billedBefore: result.totals.billedRequests, keptMessages: shared, keptTokens: sharedTokens, previousRest: tokens(previous.context) - sharedTokens, rest: promptTokens - sharedTokens, grown, prices: rates });
    }
    const figures = figuresOf(request.index, request.entryId, request.time, request.model, { ...split, output: request.outputTokens }, rates);
    result.requests.push(figures);
    addTo(result.totals, figures);
    previous = { context, asRun, mark };
    chainsPending = 0;
  }
  result.compressions = ledger.finish(result.totals.billedRequests);
  return result;
}

/** Each request with its context under the policy, and the chains the policy's step compressed. */
function contextsOf(session: ReplaySession, policy: ReplayPolicy, environment: ReplayEnvironment): (recording: Recording) => Iterable<{ context: ContextRef; chains: number; request: Recording["requests"][number] }> {
  if (policy.kind === "as-run") return (recording) => recording.requests.map((request) => ({ context: recording.contexts[request.index]!, chains: 0, request }));
  return function* (recording) {
    let context = EMPTY_CONTEXT;
    let index = 0;
    for (const step of policy.source.steps(recording, environment)) {
      const request = recording.requests[index++];
      if (request === undefined) throw new Error(`replay: policy "${policy.source.name}" gave more steps than the ${recording.requests.length} requests`);
      context = nextContext(context, step.keep, step.append.map((message) => session.recording.table.idOf(message)));
      yield { context, chains: step.compressedChains ?? 0, request };
    }
    if (index !== recording.requests.length) throw new Error(`replay: policy "${policy.source.name}" gave ${index} steps for ${recording.requests.length} requests`);
  };
}

/** What a policy is told of the replay of `session` under a cache lifetime of `ttlMs`. */
export function replayEnvironment(session: ReplaySession, ttlMs: number = CACHE_TTL_5M_MS): ReplayEnvironment {
  const pricesOf = (model: string): TokenPrices => {
    const known = session.prices.get(model);
    return known === undefined ? zeroTokens() : pricesForTtl(known, ttlMs, CACHE_TTL_5M_MS);
  };
  return { cacheTtlMs: ttlMs, pricesOf, contextWindowOf };
}

/** Adds to `result.estimatedMessages` the estimated messages of `context` after its first `from` (met before) not met before. */
function countEstimated(context: ContextRef, from: number, counted: Set<number>, table: Recording["table"], result: ReplayResult): void {
  const ids = context.segment.ids;
  for (let k = from; k < context.length; k++) {
    const id = ids[k]!;
    if (counted.has(id)) continue;
    counted.add(id);
    if (!table.hasCalibrated(id)) result.estimatedMessages++;
  }
}

function figuresOf(request: number, entryId: string, time: number, model: string, tokens: TokenSplit, p: TokenPrices): RequestFigures {
  const cost = { input: tokens.input * p.input, cacheRead: tokens.cacheRead * p.cacheRead, cacheWrite: tokens.cacheWrite * p.cacheWrite, output: tokens.output * p.output, total: 0 };
  cost.total = cost.input + cost.cacheRead + cost.cacheWrite + cost.output;
  return { request, entryId, time, model, ...tokens, promptTokens: tokens.input + tokens.cacheRead + tokens.cacheWrite, cost, billed: true };
}

function addTo(totals: ReplayResult["totals"], f: RequestFigures): void {
  totals.billedRequests++;
  totals.promptTokens += f.promptTokens;
  for (const c of ["input", "cacheRead", "cacheWrite", "output"] as const) {
    totals[c] += f[c];
    totals.cost[c] += f.cost[c];
  }
  totals.cost.total += f.cost.total;
}

function zeroTokens(): TokenSplit {
  return { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
}

function zeroCost(): CostSplit {
  return { ...zeroTokens(), total: 0 };
}
