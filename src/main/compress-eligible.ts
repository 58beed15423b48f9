/**
 * compressEligible: the orchestrator shared by `chainpress compact`, the benchmarks and the pi
 * extension's live flush. Plans on the main thread, runs uncovered chains on the worker pool with
 * a bounded number in flight, and commits strictly in chain order.
 */

import { pack } from "msgpackr";
import type { PruneState } from "../core/prune-state.js";
import type { ChainCompressionEntry, ChainRange, ChainSkip } from "../core/prune-types.js";
import { selectEligible } from "../core/select-eligible.js";
import type { AgentMessage } from "../core/session-types.js";
import { SpanIndex } from "../core/span-index.js";
import type { ChainTask, ChainTaskResult, SpillSettings, TaskFault } from "../workers/chain-task.js";
import type { AppendEntry } from "./append-entry.js";
import type { ChainRunner } from "./chain-runner.js";
import { ChainCommitError, commitCovered, commitDeterministic, type CommitContext } from "./commit-chain.js";
import { CompressStats } from "./compress-stats.js";
import type { DiagnosticSink } from "./diagnostic-sink.js";
import { planChains, retryBody, type ChainPlan, type DeterministicPlan } from "./plan-chains.js";

export interface CompressEligibleDeps {
  /** The array chain detection ran on (with the closing message on the live path). */
  messages: readonly AgentMessage[];
  chains: readonly ChainRange[];
  state: PruneState;
  /** Newest closed chains left alone; 0 for compact. */
  rollingWindow: number;
  /** Recovery-grace occurrence keys (select-eligible.ts). */
  graceKeys?: ReadonlySet<string>;
  append: AppendEntry;
  diagnostics: DiagnosticSink;
  spill: SpillSettings;
  runner: ChainRunner;
  now?: () => number;
  /** Chains dispatched but not yet committed; bounds memory (default: 2 × workers, at least 2). */
  maxInFlight?: number;
  /** Called after each chain's commit decision, in chain order. */
  onChainDone?: (progress: ChainProgress) => void;
  /** Test-only: a fault to inject into the worker for a chain. */
  faultFor?: (chain: ChainRange) => TaskFault | undefined;
}

export interface ChainProgress {
  done: number;
  total: number;
  /** UTF-16 units of archived output handled so far. */
  archivedChars: number;
}

export interface CompressEligibleResult {
  compressedEntries: ChainCompressionEntry[];
  skipped: ChainSkip[];
  stats: CompressStats;
}

export async function compressEligible(deps: CompressEligibleDeps): Promise<CompressEligibleResult> {
  const { state } = deps;
  const skipped: ChainSkip[] = deps.chains
    .filter((c) => c.finalAssistantTimestamp !== null && state.isCompressed(c.startUserTimestamp))
    .map((c) => ({ startUserTimestamp: c.startUserTimestamp, reason: "already-compressed" }));
  const eligible = selectEligible(deps.chains, deps.rollingWindow, (s) => state.isCompressed(s), deps.graceKeys);
  const stats = new CompressStats();
  const plans = stats.time("plan", () => planChains(eligible, deps.messages, new SpanIndex(deps.messages), state));
  const compressedEntries: ChainCompressionEntry[] = [];
  const ctx: CommitContext = { state, append: stats.timedAppend(deps.append), now: deps.now ?? Date.now };
  const window = deps.maxInFlight ?? Math.max(2, deps.runner.workers * 2);
  const pending = new Map<number, Promise<TaskOutcome>>();
  let dispatched = 0;
  for (let i = 0; i < plans.length; i++) {
    while (dispatched < plans.length && dispatched < i + window) {
      pending.set(dispatched, dispatch(deps, plans[dispatched]!, stats));
      dispatched++;
    }
    const outcome = await pending.get(i)!;
    pending.delete(i);
    const entry = await commitPlan(deps, ctx, plans[i]!, outcome, skipped, stats);
    if (entry) compressedEntries.push(entry);
    deps.onChainDone?.({ done: i + 1, total: plans.length, archivedChars: stats.archivedChars });
  }
  return { compressedEntries, skipped, stats };
}

type TaskOutcome = { ok: true; result: ChainTaskResult | undefined } | { ok: false; error: Error };

/** Start the worker for a deterministic plan that has fresh outputs; other plans need none. */
function dispatch(deps: CompressEligibleDeps, plan: ChainPlan, stats: CompressStats): Promise<TaskOutcome> {
  if (plan.kind !== "deterministic" || plan.plannedKeys.length === 0) return Promise.resolve({ ok: true, result: undefined });
  const task = stats.time("encode", () => buildTask(deps, plan));
  // Drop the slice reference: from here on only the encoded copy (owned by the task) is alive.
  plan.inner = [];
  return deps.runner.run(task).then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error : new Error(String(error)) }),
  );
}

function buildTask(deps: CompressEligibleDeps, plan: DeterministicPlan): ChainTask {
  const encoded = pack(plan.inner);
  // pack() may return a view of a shared buffer; the worker needs its own transferable copy.
  const encodedSlice = new Uint8Array(encoded.length);
  encodedSlice.set(encoded);
  const task: ChainTask = {
    chainStart: plan.chain.startUserTimestamp,
    encodedSlice,
    protectedIds: plan.chain.protectedToolCallIds,
    plannedKeys: plan.plannedKeys,
    reservedRefs: plan.reservedRefs,
    indexedRecords: plan.indexed.map(({ toolCallId, toolName, args, timestamp, resultTimestamp }) => ({ toolCallId, toolName, args, timestamp, resultTimestamp })),
    toolRefs: plan.toolRefs,
    spill: deps.spill,
  };
  const fault = deps.faultFor?.(plan.chain);
  if (fault) task.fault = fault;
  return task;
}

async function commitPlan(
  deps: CompressEligibleDeps,
  ctx: CommitContext,
  plan: ChainPlan,
  outcome: TaskOutcome,
  skipped: ChainSkip[],
  stats: CompressStats,
): Promise<ChainCompressionEntry | undefined> {
  const start = plan.chain.startUserTimestamp;
  try {
    if (plan.kind === "skip") {
      if (plan.diagnostic) await deps.diagnostics.report(plan.diagnostic);
      skipped.push({ startUserTimestamp: start, reason: "no-summary", cause: plan.diagnostic ? "nothing to archive in the span" : "every call is protected" });
      return undefined;
    }
    if (plan.kind === "covered") return await commitCovered(ctx, plan);
    if (!outcome.ok) throw new ChainCommitError(start, "worker", outcome.error.message);
    const result = outcome.result ?? { records: [], refs: [], body: retryBody(plan) };
    const entry = await commitDeterministic(ctx, plan, result);
    if (outcome.result) stats.addTask(outcome.result);
    return entry;
  } catch (error) {
    // Fail-closed: this chain keeps its no-summary skip; the other chains go on.
    skipped.push({ startUserTimestamp: start, reason: "no-summary", cause: (error as Error).message });
    return undefined;
  }
}
