/**
 * One planned chain's task, from its plan to its worker's result: where its messages come from
 * (the session file's lines, pi's messages found on disk, encoded on this thread, or, inline, the
 * messages themselves), prepared in the pass's lane and started when a worker is ready. What the
 * plan no longer needs it lets go of on the way (main/plan-chains.ts).
 */

import { buildRef } from "../core/chain-entry.js";
import { CLONE_MAX_DEPTH, jsonText, nestsDeeperThan } from "../core/json-text.js";
import type { BufferPool } from "../io/buffer-pool.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { SpanOutput } from "../core/extract-records.js";
import { isFileChanged, type ChainInput, type ChainTask, type ChainTaskResult, type TaskFigures } from "../workers/chain-task.js";
import { sliceBytes } from "../workers/file-slice-columns.js";
import type { TaskStart } from "./chain-runner.js";
import type { ChainWork } from "./commit-group.js";
import type { ChainSource, CompressEligibleDeps } from "./compress-eligible.js";
import type { CompressStats } from "./compress-stats.js";
import { encodeSlice } from "./encode-slice.js";
import { fileTaskRecords } from "./file-task-records.js";
import { dropInner, dropOutputs, takeOutputs, type ChainPlan, type DeterministicPlan } from "./plan-chains.js";
import type { PrepareLane } from "./prepare-lane.js";
import { runAndSettleSpills } from "./settle-spills.js";
import type { Slots } from "./task-slots.js";

/** What one compressEligible call's dispatches share. */
export interface DispatchRun {
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

type FileRoad = Extract<ChainSource, { kind: "file" }>;
type MemoryRoad = Extract<ChainSource, { kind: "memory" }>;

/** A caller that names no source: whole messages in memory, every chain encoded. */
const IN_MEMORY: MemoryRoad = { kind: "memory" };

/** A chain's work for its commit, with its task's figures for the pass's stats. */
export type DispatchedWork = ChainWork & TaskFigures;

export type TaskOutcome = { ok: true; result: DispatchedWork | undefined } | { ok: false; error: Error };

/** Start the worker for a deterministic plan that has fresh outputs; other plans need none. */
export function dispatchChain({ deps, stats, rooms, ready, lane }: DispatchRun, plan: ChainPlan): Promise<TaskOutcome> {
  if (plan.kind !== "deterministic" || plan.plannedKeys.length === 0) return Promise.resolve({ ok: true, result: undefined });
  let leave = () => {};
  // Called as the task starts (ChainRunner.run); rooms are lent to worker threads only.
  const onStart = (lendRoom: boolean): TaskStart => {
    leave();
    stats.noteTaskStart();
    const indexRoom = lendRoom ? (rooms?.takeLargest()?.buffer as ArrayBuffer | undefined) : undefined;
    return indexRoom ? { indexRoom } : {};
  };
  const prepareAndRun = async (): Promise<DispatchedWork> => {
    leave = await ready.enter();
    try {
      const source = deps.source ?? IN_MEMORY;
      return await (source.kind === "file" ? runFromFile(deps, lane, source.fileSlice, plan, onStart) : runFromMemory(deps, stats, lane, source, plan, () => onStart(true)));
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

/**
 * The file path: the worker reads the plan's lines from the session file and sends back what the
 * main thread keeps of its records. A small chain's task runs on this thread instead, when the
 * pass says so (CompressEligibleDeps.smallChains).
 */
async function runFromFile(deps: CompressEligibleDeps, lane: PrepareLane, fileSlice: FileRoad["fileSlice"], plan: DeterministicPlan, onStart: (lendRoom: boolean) => TaskStart): Promise<DispatchedWork> {
  const slice = await lane.run(() => fileSlice(plan));
  // The worker reads the span from the file.
  dropInner(plan);
  const small = deps.smallChains;
  const here = small !== undefined && sliceBytes(slice) < small.belowBytes;
  const runner = here ? small.runner : deps.runner;
  const result = await runAndSettleSpills(runner, buildTask(deps, plan, { kind: "file-slice", slice, mainMessages: "lightened" }), () => onStart(!here));
  return madeWork(result, takeOutputs(plan), plan, true);
}

/**
 * Messages held in memory (pi's): handed over as they are when the task runs on this thread;
 * otherwise from their lines on disk when the worker finds them there, else encoded on this thread.
 */
async function runFromMemory(deps: CompressEligibleDeps, stats: CompressStats, lane: PrepareLane, { linesOnDisk }: MemoryRoad, plan: DeterministicPlan, onStart: () => TaskStart): Promise<DispatchedWork> {
  // Inline, the task reads the plan's messages in place: neither re-read from disk nor encoded.
  if (deps.runner.workers === 0) return runInPlace(deps, plan, onStart);
  const started = linesOnDisk && (await lane.run(() => startFromDisk(deps, linesOnDisk, plan, onStart)));
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
  // `__proto__` key: such a rare slice goes by structured clone instead, which keeps both; one
  // nested deeper than either can go, as JSON text.
  if (encoded === "clone") return recordsWork(await runAndSettleSpills(deps.runner, buildTask(deps, plan, { kind: "messages", messages: plan.inner }), onStart), plan);
  if (encoded === "json") {
    const texts = await lane.run(() => plan.inner.map((message) => jsonText(message)));
    dropInner(plan);
    return recordsWork(await runAndSettleSpills(deps.runner, buildTask(deps, plan, { kind: "json", texts }), onStart), plan);
  }
  stats.stageMs.encode += encoded.busyMs;
  // From here on only the encoded copy (owned by the task) is alive.
  dropInner(plan);
  return recordsWork(await runAndSettleSpills(deps.runner, buildTask(deps, plan, { kind: "encoded", chunks: encoded.chunks }), onStart), plan);
}

/** The plan's messages, read by an inline task where they lie; its records share their strings. */
async function runInPlace(deps: CompressEligibleDeps, plan: DeterministicPlan, onStart: () => TaskStart): Promise<DispatchedWork> {
  dropOutputs(plan);
  const task = buildTask(deps, plan, { kind: "messages", messages: plan.inner });
  dropInner(plan);
  return recordsWork(await runAndSettleSpills(deps.runner, task, onStart), plan);
}

/**
 * The plan's chain started from its lines in the session file (`linesOnDisk`); undefined when they
 * are not all there. Its work is undefined when the worker found a line changed, or could not read
 * them: the caller then sends the chain encoded (pi's messages are what it holds true). Wrapped, so
 * that the preparation lane does not wait for the worker.
 */
function startFromDisk(deps: CompressEligibleDeps, linesOnDisk: NonNullable<MemoryRoad["linesOnDisk"]>, plan: DeterministicPlan, onStart: () => TaskStart): { work: Promise<DispatchedWork | undefined> } | undefined {
  const slice = linesOnDisk(plan);
  if (!slice) return undefined;
  const work = runAndSettleSpills(deps.runner, buildTask(deps, plan, { kind: "file-slice", slice, mainMessages: "whole" }), onStart).then(
    // The records are made here from pi's own messages: they share its strings, and no output
    // crosses back from the worker.
    (result) => madeWork(result, plan.outputs, plan, false),
    (error: unknown) => {
      if (isFileChanged(error)) return undefined;
      throw error;
    },
  );
  return { work };
}

/** The work of a "messages" or "encoded" task: the worker's records and refs, whole. */
function recordsWork(result: ChainTaskResult, plan: DeterministicPlan): DispatchedWork {
  if (result.kind !== "records") throw new Error(`internal error: chain ${plan.chain.startUserTimestamp}: its task sent ${result.kind}, not records`);
  const { refs, body, indexDataJson, recordsJson } = result;
  const records = recordsJson === undefined ? result.records : recordsJson.map((text) => JSON.parse(text) as ToolCallRecord);
  return { ...figuresOf(result), records, refs, body, indexDataJson, keys: plan.plannedKeys, lightened: false };
}

/** The work of a "file-slice" task: records made here from the plan's `outputs` (lightened or whole, as this thread's messages are) and the worker's facts. */
function madeWork(result: ChainTaskResult, outputs: readonly SpanOutput[], plan: DeterministicPlan, lightened: boolean): DispatchedWork {
  const records = fileTaskRecords(outputs, result);
  const refs = records.map((record, i) => buildRef(plan.reservedRefs[i]!, record.toolCallId, record.resultTimestamp));
  const { body, indexDataJson } = result;
  return { ...figuresOf(result), records, refs, body, indexDataJson, keys: plan.plannedKeys, lightened };
}

function figuresOf({ spilledFiles, spilledBytes, archivedChars, timings }: ChainTaskResult): TaskFigures {
  return { spilledFiles, spilledBytes, archivedChars, timings };
}

/** A record's args as a task carries them: as they are, or as JSON text when too deep to clone. */
function clonableArgs(args: unknown): { args: unknown; argsJson?: string } {
  return nestsDeeperThan(args, CLONE_MAX_DEPTH) ? { args: undefined, argsJson: jsonText(args) } : { args };
}

function buildTask(deps: CompressEligibleDeps, plan: DeterministicPlan, input: ChainInput): ChainTask {
  const task: ChainTask = {
    chainStart: plan.chain.startUserTimestamp,
    input,
    protectedIds: plan.chain.protectedToolCallIds,
    plannedKeys: plan.plannedKeys,
    reservedRefs: plan.reservedRefs,
    indexedRecords: plan.indexed.map(({ toolCallId, toolName, args, timestamp, resultTimestamp }) => ({ toolCallId, toolName, ...clonableArgs(args), timestamp, resultTimestamp })),
    toolRefs: plan.toolRefs,
    spill: deps.spill,
  };
  if (plan.open) task.indexOnly = true;
  const fault = deps.faultFor?.(plan.chain);
  if (fault) task.fault = fault;
  return task;
}
