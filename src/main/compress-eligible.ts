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
import { isFileChanged, type ChainTask, type ChainTaskResult, type FileSlice, type SpillSettings, type TaskFault } from "../workers/chain-task.js";
import type { AppendEntry } from "./append-entry.js";
import type { ChainRunner, TaskStart } from "./chain-runner.js";
import { GroupCommit, type ChainWork, type CommitContext, type GroupItem, type GroupOutcome } from "./commit-group.js";
import { CompressStats } from "./compress-stats.js";
import { DispatchWindow } from "./dispatch-window.js";
import { encodeSlice } from "./encode-slice.js";
import type { DiagnosticSink } from "./diagnostic-sink.js";
import { driveSteps, pauseIfDue } from "./cooperative.js";
import { fileTaskRecords } from "./file-task-records.js";
import { dropInner, dropOutputs, planChainSteps, retryBody, takeOutputs, type ChainPlan, type DeterministicPlan } from "./plan-chains.js";
import { compressOpenChain, type OpenChainInput, type OpenChainOutcome } from "./compress-open-chain.js";
import { Slots } from "./task-slots.js";
import { runAndSettleSpills } from "./settle-spills.js";
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
  /**
   * The file path: the lines of the session file a plan's worker reads.
   * `messages` are then lightened (core/light-value.ts) and every chain's worker fetches the real
   * bytes itself.
   */
  fileSlice?: (plan: DeterministicPlan) => Pick<ChainTask, "fileSlice">;
  /**
   * pi's `/pruner compact`: `messages` are whole (pi's, in memory) and most are lines of the session
   * file already. A plan whose lines this finds goes to its worker as those lines, which the worker
   * reads and checks itself, instead of encoded on this thread; one it does not find (undefined),
   * or whose lines the worker finds changed or cannot read, is encoded as usual.
   */
  linesOnDisk?: (plan: DeterministicPlan) => FileSlice | undefined;
  now?: () => number;
  /** Chains dispatched but not yet committed; bounds memory (default: one commit group plus 2 × workers). */
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
  /** The open chain's step, when `openChain` was given. */
  openChain?: OpenChainOutcome;
}

export async function compressEligible(deps: CompressEligibleDeps): Promise<CompressEligibleResult> {
  const { state } = deps;
  const skipped = alreadyCompressed(deps.chains, state);
  const eligible = selectEligible(deps.chains, deps.rollingWindow, (s) => state.isCompressed(s), deps.graceKeys);
  const stats = new CompressStats();
  const window = inFlightWindow(deps);
  // Rooms for index bytes (ChainTask.indexRoom) are out with running tasks and with results not
  // yet written: never more than the window. Once warm, no chain allocates its index bytes.
  // Only for worker threads: inline, the bytes are this isolate's own, and their allocations are
  // what paces its full collections of the chains' garbage, which is on this heap too: lent
  // rooms raised the inline peak RSS.
  const rooms = deps.runner.workers > 0 ? new BufferPool(window, INDEX_ROOM_MAX_BYTES) : undefined;
  const run: Run = { deps, stats, rooms, ready: new Slots(Math.max(1, deps.runner.workers)), lane: new PrepareLane() };
  // Each chain's task starts as soon as it is planned (main/dispatch-window.ts).
  const tasks = new DispatchWindow((plan) => dispatch(run, plan), window);
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
      if (work && "timings" in work) stats.addTask(work as ChainTaskResult);
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
async function compressOpenChainAfter(run: Run, openChain: OpenChainInput, ctx: CommitContext): Promise<OpenChainOutcome> {
  const { deps, stats } = run;
  let work: ChainTaskResult | undefined;
  const outcome = await compressOpenChain(openChain, deps.messages, deps.graceKeys ?? new Set(), ctx, async (plan) => {
    const dispatched = await dispatch(run, plan);
    if (!dispatched.ok) throw dispatched.error;
    return (work = dispatched.result!);
  });
  if (work && outcome.refs.length > 0) stats.addTask(work);
  return outcome;
}

/** What one compressEligible call's dispatches share. */
interface Run {
  deps: CompressEligibleDeps;
  stats: CompressStats;
  /** Buffers for index bytes, offered to tasks (ChainTask.indexRoom); none inline. */
  rooms: BufferPool | undefined;
  /**
   * Places for tasks prepared and not yet started: one per worker, so each has its next task
   * ready. The rest of the window waits unprepared: a prepared task holds its span's line list
   * (or its encoding) while it waits, and waiting through collections, those were promoted to the
   * old generation only to die there.
   */
  ready: Slots;
  /** Where the pass's tasks are prepared, one after another (main/prepare-lane.ts). */
  lane: PrepareLane;
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
  run: Run,
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
    const group = new GroupCommit(ctx);
    for (let i = first; i < last; i++) {
      // Keep the pool busy: dispatch ahead, never more than `window` uncommitted chains.
      tasks.allow(first + window);
      await group.add(toItem(plans[i]!, await tasks.take(i)));
    }
    onGroup(group.items, await group.finish());
    run.deps.onChainDone?.({ done: last, total: plans.length, archivedChars: run.stats.archivedChars });
  }
}

/** Why a chain that was not compressed stays as it is. */
function skipOf(outcome: GroupOutcome): ChainSkip {
  const skip: ChainSkip = { startUserTimestamp: outcome.plan.chain.startUserTimestamp, reason: "no-summary", cause: outcome.failure! };
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
    planned(await driveSteps(stats.timeSteps("plan", planChainSteps(chain, deps.messages, spans, deps.state, claimed))));
  }
}

/** A task's result, with the plan's keys of its records (ChainWork.keys) and, when the task sent no refs, their short refs (ChainWork.shortRefs). */
type DispatchedWork = ChainTaskResult & Pick<ChainWork, "keys" | "shortRefs">;

type TaskOutcome = { ok: true; result: DispatchedWork | undefined } | { ok: false; error: Error };

/** Start the worker for a deterministic plan that has fresh outputs; other plans need none. */
function dispatch({ deps, stats, rooms, ready, lane }: Run, plan: ChainPlan): Promise<TaskOutcome> {
  if (plan.kind !== "deterministic" || plan.plannedKeys.length === 0) return Promise.resolve({ ok: true, result: undefined });
  let leave = () => {};
  // Called as the task starts in a worker (ChainRunner.run).
  const onStart = (): TaskStart => {
    leave();
    stats.noteTaskStart();
    const indexRoom = rooms?.takeLargest()?.buffer as ArrayBuffer | undefined;
    return indexRoom ? { indexRoom } : {};
  };
  const prepareAndRun = async (): Promise<DispatchedWork> => {
    leave = await ready.enter();
    try {
      return await (deps.fileSlice ? runFromFile(deps, lane, deps.fileSlice, plan, onStart) : runFromMemory(deps, stats, lane, plan, onStart));
    } finally {
      // A task that failed before it started gives its place back here (leaving twice is a no-op).
      leave();
      stats.noteTaskEnd();
    }
  };
  return prepareAndRun().then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error : new Error(String(error)) }),
  );
}

/** The file path: the worker reads the plan's lines from the session file and sends back what the main thread keeps of its records. */
async function runFromFile(deps: CompressEligibleDeps, lane: PrepareLane, fileSlice: NonNullable<CompressEligibleDeps["fileSlice"]>, plan: DeterministicPlan, onStart: () => TaskStart): Promise<DispatchedWork> {
  const slice = await lane.run(() => fileSlice(plan));
  // The worker reads the span from the file.
  dropInner(plan);
  const result = await runAndSettleSpills(deps.runner, buildTask(deps, plan, slice), onStart);
  const records = fileTaskRecords(takeOutputs(plan), result.archived ?? []);
  return { ...result, records, keys: plan.plannedKeys, shortRefs: plan.reservedRefs };
}

/** Messages held in memory (pi's): from their lines on disk when the worker finds them there, else encoded on this thread. */
async function runFromMemory(deps: CompressEligibleDeps, stats: CompressStats, lane: PrepareLane, plan: DeterministicPlan, onStart: () => TaskStart): Promise<DispatchedWork> {
  const started = deps.linesOnDisk && (await lane.run(() => startFromDisk(deps, plan, onStart)));
  const fromDisk = started && (await started.work);
  if (fromDisk) {
    stats.chainsFromFile++;
    dropInner(plan);
    dropOutputs(plan);
    return fromDisk;
  }
  // The live path's records come from the worker whole: the planned outputs are not needed.
  dropOutputs(plan);
  const encoded = await lane.run(() => encodeSlice(plan.inner));
  // msgpack carries strings as UTF-8, which has no lone surrogates, and msgpackr renames a
  // `__proto__` key: such a rare slice goes by structured clone instead, which keeps both.
  if (!encoded) return { ...(await runAndSettleSpills(deps.runner, buildTask(deps, plan, { inner: plan.inner }), onStart)), keys: plan.plannedKeys };
  stats.stageMs.encode += encoded.busyMs;
  // From here on only the encoded copy (owned by the task) is alive.
  dropInner(plan);
  return { ...(await runAndSettleSpills(deps.runner, buildTask(deps, plan, { encodedSlice: encoded.chunks }), onStart)), keys: plan.plannedKeys };
}

/**
 * The plan's chain started from its lines in the session file (`linesOnDisk`); undefined when they
 * are not all there. Its work is undefined when the worker found a line changed, or could not read
 * them: the caller then sends the chain encoded (pi's messages are what it holds true). Wrapped, so
 * that the preparation lane does not wait for the worker.
 */
function startFromDisk(deps: CompressEligibleDeps, plan: DeterministicPlan, onStart: () => TaskStart): { work: Promise<DispatchedWork | undefined> } | undefined {
  const fileSlice = deps.linesOnDisk!(plan);
  if (!fileSlice) return undefined;
  const work = runAndSettleSpills(deps.runner, buildTask(deps, plan, { fileSlice, wholeMessages: true }), onStart).then(
    // The records are made here from pi's own messages: they share its strings, and no output
    // crosses back from the worker.
    (result): DispatchedWork => ({ ...result, records: fileTaskRecords(plan.outputs, result.archived ?? []), keys: plan.plannedKeys, shortRefs: plan.reservedRefs }),
    (error: unknown) => {
      if (isFileChanged(error)) return undefined;
      throw error;
    },
  );
  return { work };
}

function buildTask(deps: CompressEligibleDeps, plan: DeterministicPlan, slice: Pick<ChainTask, "encodedSlice" | "inner" | "fileSlice" | "wholeMessages">): ChainTask {
  const task: ChainTask = {
    chainStart: plan.chain.startUserTimestamp,
    ...slice,
    protectedIds: plan.chain.protectedToolCallIds,
    plannedKeys: plan.plannedKeys,
    reservedRefs: plan.reservedRefs,
    indexedRecords: plan.indexed.map(({ toolCallId, toolName, args, timestamp, resultTimestamp }) => ({ toolCallId, toolName, args, timestamp, resultTimestamp })),
    toolRefs: plan.toolRefs,
    spill: deps.spill,
  };
  if (plan.open) task.indexOnly = true;
  const fault = deps.faultFor?.(plan.chain);
  if (fault) task.fault = fault;
  return task;
}

function toItem(plan: ChainPlan, outcome: TaskOutcome): GroupItem {
  if (plan.kind !== "deterministic") return { plan };
  if (!outcome.ok) return { plan, failure: `worker failed: ${outcome.error.message}` };
  if (!outcome.result) {
    try {
      return { plan, work: { records: [], refs: [], body: retryBody(plan) } };
    } catch (error) {
      // A malformed archived record (say, an impossible timestamp) costs this chain only.
      return { plan, failure: `cannot compose the body: ${(error as Error).message}` };
    }
  }
  return { plan, work: outcome.result };
}
