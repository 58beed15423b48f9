/**
 * compressEligible: the orchestrator shared by `chainpress compact`, the benchmarks and the pi
 * extension's live flush. Plans on the main thread, runs uncovered chains on the worker pool with
 * a bounded number in flight, and commits strictly in chain order, in fixed-size groups.
 */

import type { PruneState } from "../core/prune-state.js";
import type { ChainCompressionEntry, ChainRange, ChainSkip } from "../core/prune-types.js";
import { selectEligible } from "../core/select-eligible.js";
import type { AgentMessage } from "../core/session-types.js";
import { SpanIndex } from "../core/span-index.js";
import { BufferPool } from "../io/buffer-pool.js";
import { spillFailureOf } from "../io/spill-errors.js";
import type { FileSlice, SpillSettings, TaskFault } from "../workers/chain-task.js";
import type { AppendEntry } from "./append-entry.js";
import type { ChainRunner } from "./chain-runner.js";
import { GroupCommit, type CommitContext, type GroupItem, type GroupOutcome } from "./commit-group.js";
import { CompressStats } from "./compress-stats.js";
import { dispatchChain, type DispatchedWork, type DispatchRun, type TaskOutcome } from "./dispatch-chain.js";
import { DispatchWindow } from "./dispatch-window.js";
import type { DiagnosticSink } from "./diagnostic-sink.js";
import { driveSteps, pauseIfDue } from "./cooperative.js";
import { planChainSteps, retryBody, type ChainPlan, type DeterministicPlan } from "./plan-chains.js";
import { compressOpenChain, type OpenChainInput, type OpenChainOutcome } from "./compress-open-chain.js";
import { Slots } from "./task-slots.js";
import type { ShrinkRender } from "./plan-shrink.js";
import { PrepareLane } from "./prepare-lane.js";

/**
 * Chains committed together (two fsyncs per group). Fixed, not derived from the worker count,
 * so the session bytes are the same whatever the pool size.
 */
export const COMMIT_GROUP_SIZE = 16;

export interface CompressEligibleDeps {
  /** The array chain detection ran on (with the closing message on the live path). */
  messages: readonly AgentMessage[];
  chains: readonly ChainRange[];
  state: PruneState;
  /** Newest closed chains left alone; 0 for compact. */
  rollingWindow: number;
  /** Recovery-grace occurrence keys (select-eligible.ts). */
  graceKeys?: ReadonlySet<string>;
  /** Appends one entry. Durable when it resolves, unless `sync` is given. */
  append: AppendEntry;
  /** With a `sync`, appends are durable only once it resolves: the orchestrator commits in groups. */
  sync?: () => Promise<void>;
  diagnostics: DiagnosticSink;
  spill: SpillSettings;
  runner: ChainRunner;
  /** Where each chain's worker gets its messages from (default: `{ kind: "memory" }`, every chain encoded). */
  source?: ChainSource;
  now?: () => number;
  /** Chains dispatched but not yet committed; bounds memory (default: one commit group plus 2 × workers; when tasks run on this thread, up to one group more while a group's fsyncs run). */
  maxInFlight?: number;
  /**
   * Main-thread work to do while the first chains run in the workers, before anything is
   * committed (the compaction's "before" context measure): it overlaps the pool's work.
   */
  whileFirstChainsRun?: () => Promise<void>;
  /** Called after each chain's commit decision, in chain order. */
  onChainDone?: (progress: ChainProgress) => void;
  /** Test-only: a fault to inject into the worker for a chain. */
  faultFor?: (chain: ChainRange) => TaskFault | undefined;
  /** The chain still open at the end of `messages`, and the policy for archiving its older outputs. */
  openChain?: OpenChainInput;
  /** How the context will be rendered, for the check that a chain's compression shrinks it (main/plan-shrink.ts). */
  render?: ShrinkRender;
  /**
   * On the file road with a pool: chains whose lines are fewer bytes than `belowBytes` run on
   * `runner`, an inline runner, instead (main/small-session.ts says why).
   */
  smallChains?: { runner: ChainRunner; belowBytes: number };
}

/**
 * The road a pass's chains take to their workers:
 * - "file" (`chainpress compact`): `messages` are lightened (core/light-value.ts), and every
 *   chain's worker reads the real bytes itself, from the lines of the session file `fileSlice`
 *   lists for its plan.
 * - "memory" (pi's, a library caller's, a small session read whole): `messages` are whole, in
 *   memory. An inline runner's task reads them in place; for a pool each chain is encoded on
 *   this thread. With `linesOnDisk` (pi's `/pruner compact`), most are lines of the
 *   session file already: a plan whose lines it finds goes to its worker as those lines, which the
 *   worker reads and checks itself; one it does not find (undefined), or whose lines the worker
 *   finds changed or cannot read, is encoded as usual.
 */
export type ChainSource =
  | { kind: "file"; fileSlice: (plan: DeterministicPlan) => FileSlice }
  | { kind: "memory"; linesOnDisk?: (plan: DeterministicPlan) => FileSlice | undefined };

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
  /** The open chain's step, when `openChain` was given. */
  openChain?: OpenChainOutcome;
}

export async function compressEligible(deps: CompressEligibleDeps): Promise<CompressEligibleResult> {
  const { state } = deps;
  const skipped = alreadyCompressed(deps.chains, state);
  const eligible = selectEligible(deps.chains, deps.rollingWindow, (s) => state.isCompressed(s), deps.graceKeys);
  // Two passes over every chain, and the caller's own before them: thousands of chains fill a slice.
  await pauseIfDue();
  const stats = new CompressStats();
  const window = inFlightWindow(deps);
  // Rooms for index bytes (ChainTask.indexRoom) are out with running tasks and with results not
  // yet written: never more than the window. Once warm, no chain allocates its index bytes.
  // Only for worker threads: inline, the bytes are this isolate's own, and their allocations are
  // what paces its full collections of the chains' garbage, which is on this heap too: lent
  // rooms raised the inline peak RSS.
  const rooms = deps.runner.workers > 0 ? new BufferPool(window, INDEX_ROOM_MAX_BYTES) : undefined;
  const run: DispatchRun = { deps, stats, rooms, ready: new Slots(Math.max(1, deps.runner.workers)), lane: new PrepareLane() };
  // Each chain's task starts as soon as it is planned (main/dispatch-window.ts).
  const tasks = new DispatchWindow((plan) => dispatchChain(run, plan), window);
  try {
    await planCooperatively(eligible, deps, stats, (plan) => tasks.add(plan));
  } catch (error) {
    // No task of a pass that failed outlives it.
    await tasks.settled();
    throw error;
  }
  const ctx: CommitContext = {
    state,
    append: stats.timedAppend(deps.append),
    sync: stats.timedSync(deps.sync ?? (async () => undefined)),
    diagnostics: deps.diagnostics,
    now: deps.now ?? Date.now,
    reuseIndexBytes: (bytes) => rooms?.give(Buffer.from(bytes.buffer, 0, bytes.buffer.byteLength)),
  };
  const compressedEntries: ChainCompressionEntry[] = [];
  await runAndCommit(run, tasks, window, ctx, (items, outcomes) => {
    outcomes.forEach((outcome, k) => {
      if (!outcome.entry) {
        skipped.push(skipOf(outcome));
        return;
      }
      compressedEntries.push(outcome.entry);
      const work = items[k]!.work;
      if (work && "timings" in work) stats.addTask(work as DispatchedWork);
    });
  });
  if (!deps.openChain) return { compressedEntries, skipped, stats };
  return { compressedEntries, skipped, stats, openChain: await compressOpenChainAfter(run, deps.openChain, ctx) };
}

/** Closed chains this pass leaves alone because an earlier one compressed them. */
function alreadyCompressed(chains: readonly ChainRange[], state: PruneState): ChainSkip[] {
  return chains
    .filter((c) => c.finalAssistantTimestamp !== null && state.isCompressed(c.startUserTimestamp))
    .map((c) => ({ startUserTimestamp: c.startUserTimestamp, reason: "already-compressed" }));
}

/** The open chain's step, after the closed chains: its refs come after theirs, for any worker count. */
async function compressOpenChainAfter(run: DispatchRun, openChain: OpenChainInput, ctx: CommitContext): Promise<OpenChainOutcome> {
  const { deps, stats } = run;
  let work: DispatchedWork | undefined;
  const outcome = await compressOpenChain(openChain, deps.messages, deps.graceKeys ?? new Set(), ctx, async (plan) => {
    const dispatched = await dispatchChain(run, plan);
    if (!dispatched.ok) throw dispatched.error;
    return (work = dispatched.result!);
  });
  if (work && outcome.refs.length > 0) stats.addTask(work);
  return outcome;
}

/** Index rooms larger than this are not kept (a chain that big gets one of its own each time). */
const INDEX_ROOM_MAX_BYTES = 32 * 1024 * 1024;

/** Chains dispatched and not yet committed, at most. */
function inFlightWindow(deps: CompressEligibleDeps): number {
  // A group plus a few chains per worker: the pool keeps working while a group is committed.
  return Math.max(deps.maxInFlight ?? COMMIT_GROUP_SIZE + deps.runner.workers * 2, 1);
}

/**
 * Commits the planned chains strictly in chain order, a group at a time, as their tasks end, with
 * at most `window` chains dispatched and not yet committed; `onGroup` hears each group's outcomes.
 */
async function runAndCommit(
  run: DispatchRun,
  tasks: DispatchWindow<TaskOutcome>,
  window: number,
  ctx: CommitContext,
  onGroup: (items: readonly GroupItem[], outcomes: GroupOutcome[]) => void,
): Promise<void> {
  // The group size must not depend on the worker count (see COMMIT_GROUP_SIZE).
  const groupSize = Math.min(COMMIT_GROUP_SIZE, window);
  const { plans } = tasks;
  await run.deps.whileFirstChainsRun?.();
  for (let first = 0; first < plans.length; first += groupSize) {
    const last = Math.min(first + groupSize, plans.length);
    const group = new GroupCommit(runsHere(run.deps) ? { ...ctx, whileSyncing: releaseNextGroup(tasks, last, groupSize) } : ctx);
    for (let i = first; i < last; i++) {
      // Keep the pool busy: dispatch ahead, never more than `window` uncommitted chains.
      tasks.allow(first + window);
      await group.add(toItem(plans[i]!, await tasks.take(i)));
    }
    onGroup(group.items, await group.finish());
    run.deps.onChainDone?.({ done: last, total: plans.length, archivedChars: run.stats.archivedChars });
  }
}

/** Whether some of the pass's tasks run on this thread. */
function runsHere(deps: CompressEligibleDeps): boolean {
  return deps.runner.workers === 0 || deps.smallChains !== undefined;
}

/**
 * Tasks that run on this thread would otherwise wait for each of a group's two fsyncs: each lets
 * half of the next group's tasks go, to run while the disk works. Only the order in which tasks
 * start changes, never what they write (dispatch-window.ts). A pool's task let go early waits for
 * a free worker unprepared (DispatchRun.ready).
 */
function releaseNextGroup(tasks: DispatchWindow<TaskOutcome>, last: number, groupSize: number): () => void {
  let released = last;
  return () => tasks.allow((released = Math.min(released + Math.ceil(groupSize / 2), last + groupSize)));
}

/** Why a chain that was not compressed stays as it is. */
function skipOf(outcome: GroupOutcome): ChainSkip {
  const skip: ChainSkip = { startUserTimestamp: outcome.plan.chain.startUserTimestamp, reason: outcome.failureReason ?? "no-summary", cause: outcome.failure! };
  if (outcome.failed) skip.failed = true;
  if (outcome.plan.kind === "skip" && outcome.plan.permanent) skip.permanent = true;
  return skip;
}

/** Plans every eligible chain in chain order, handing each plan to `planned` and the event loop back between chains when due. */
async function planCooperatively(eligible: readonly ChainRange[], deps: CompressEligibleDeps, stats: CompressStats, planned: (plan: ChainPlan) => void): Promise<void> {
  // Linear in the session's messages: built in slices too.
  const spans = await driveSteps(stats.timeSteps("plan", SpanIndex.steps(deps.messages, eligible)));
  // Outputs claimed by earlier chains of this pass count as archived, as in a serial run.
  const claimed = new Set<string>();
  for (const chain of eligible) {
    await pauseIfDue();
    planned(await driveSteps(stats.timeSteps("plan", planChainSteps(chain, deps.messages, spans, deps.state, claimed, deps.render))));
  }
}

function toItem(plan: ChainPlan, outcome: TaskOutcome): GroupItem {
  if (plan.kind !== "deterministic") return { plan };
  if (!outcome.ok) {
    const reason = spillFailureOf(outcome.error);
    return { plan, failure: `worker failed: ${outcome.error.message}`, ...(reason === undefined ? {} : { failureReason: reason }) };
  }
  if (!outcome.result) {
    try {
      return { plan, work: { records: [], refs: [], body: retryBody(plan), lightened: false } };
    } catch (error) {
      // A malformed archived record (say, an impossible timestamp) costs this chain only.
      return { plan, failure: `cannot compose the body: ${(error as Error).message}` };
    }
  }
  return { plan, work: outcome.result };
}
