/**
 * The main job: compact one session file in place (what `/pruner compact` does), returning a
 * report. Reads and reconstructs, migrates a version-1/2 file first (atomically), then runs
 * compressEligible with a durable appender. A dry run does the same work against an appender that
 * keeps nothing and a throw-away blob folder, so the input is never touched.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { chainsToCompact, compactionVisibility } from "../core/compaction-visibility.js";
import { detectChainsSteps, detectOpenChain } from "../core/detect-chains.js";
import { makeProtectionPredicate, type ProtectionPredicate } from "../core/protection.js";
import type { ChainRange } from "../core/prune-types.js";
import { recoveryGraceKeysSteps } from "../core/select-eligible.js";
import { SessionAppender } from "../io/append-session.js";
import { migrateFileInPlace } from "../io/migrate-file.js";
import { readSession, type LoadedSession } from "../io/read-session.js";
import { SessionFileError } from "../io/session-errors.js";
import { CURRENT_SESSION_VERSION, type SessionEntry } from "../core/session-types.js";
import { stepDue, type Steps } from "../core/steps.js";
import { spillModesFor } from "../io/write-spill.js";
import type { SpillSettings, TaskFault } from "../workers/chain-task.js";
import type { AppendEntry } from "./append-entry.js";
import { createChainRunner, type ChainRunner } from "./chain-runner.js";
import { DEFAULT_COMPACT_OPTIONS, type CompactOptions } from "./compact-options.js";
import { buildCompactReport, type CompactReport } from "./compact-report.js";
import { compressEligible, type ChainProgress, type ChainSource } from "./compress-eligible.js";
import type { OpenChainInput } from "./compress-open-chain.js";
import { measureContextCooperatively, type ContextSize, type MessageLengths } from "./context-size.js";
import { driveSteps } from "./cooperative.js";
import { DiagnosticSink } from "./diagnostic-sink.js";
import type { DeterministicPlan } from "./plan-chains.js";
import { fileSliceOf } from "./file-slice.js";
import { startLoadMonitor, type LoadMonitor } from "./load-monitor.js";
import { migrateScannedFile } from "./migrate-scanned.js";
import { isSmallSession } from "./small-session.js";
import { scanSession } from "./scan-session.js";
import { modelOfCooperatively, type SessionModel } from "./session-model.js";

export interface CompactSessionParams {
  file: string;
  runner: ChainRunner;
  options?: Partial<CompactOptions>;
  onProgress?: (progress: ChainProgress) => void;
  /** Test-only fault injection, per chain. */
  faultFor?: (chain: ChainRange) => TaskFault | undefined;
}

export async function compactSession(params: CompactSessionParams): Promise<CompactReport> {
  const started = performance.now();
  const monitor = startLoadMonitor();
  try {
    return await compactMonitored(params, started, monitor);
  } finally {
    monitor.stop();
  }
}

async function compactMonitored(params: CompactSessionParams, started: number, monitor: LoadMonitor): Promise<CompactReport> {
  const options = { ...DEFAULT_COMPACT_OPTIONS, ...params.options };
  const { loaded, migrated } = await loadForCompaction(params.file, params.runner, options);
  const scanned = performance.now();
  // Each step below is linear in the entries and runs in slices: the event loop (a progress bar,
  // pi's UI) gets a turn every few milliseconds.
  const model = await modelOfCooperatively(loaded);
  const isProtected = makeProtectionPredicate(options);
  const renderOptions = { isProtected, recoveryGraceTurns: options.recoveryGraceTurns };
  let before: ContextSize | undefined;
  // What the "before" measure serialised, which the "after" one then need not.
  const lengths: MessageLengths = new WeakMap();
  const chains = await driveSteps(detectChainsSteps(model.messages, isProtected));
  const graceKeys = await driveSteps(recoveryGraceKeysSteps(model.messages, options.recoveryGraceTurns));
  // Chains behind pi's latest compaction save no context, only grow the file: left out by default.
  const hiddenByCompaction = { ...compactionVisibility(model.branch, chains), included: options.includeCompacted };
  const writer = await openWriter(model, options);
  const smallChains = smallChainsFor(model, params.runner, options);
  try {
    const diagnostics = new DiagnosticSink(writer.append);
    const result = await compressEligible({
      messages: model.messages,
      chains: chainsToCompact(chains, hiddenByCompaction, options.includeCompacted),
      state: model.state,
      rollingWindow: options.rollingWindow,
      graceKeys,
      append: writer.append,
      sync: writer.sync,
      diagnostics,
      spill: spillSettings(model, options, writer.blobDir),
      runner: params.runner,
      source: chainSource(model),
      ...(params.onProgress ? { onChainDone: params.onProgress } : {}),
      // Measured while the first chains run; nothing has been committed yet.
      whileFirstChainsRun: async () => void (before = await measureContextCooperatively(model, renderOptions, lengths)),
      ...(params.faultFor ? { faultFor: params.faultFor } : {}),
      ...openChainInput(model, options, isProtected),
      render: options.render,
      ...(smallChains ? { smallChains } : {}),
    });
    // compressEligible always runs the hook; this only keeps the type honest.
    before ??= await measureContextCooperatively(model, renderOptions, lengths);
    const after = await measureContextCooperatively(model, renderOptions, lengths);
    const load = monitor.stop();
    return buildCompactReport({ model, chains, result, before, after, migrated, dryRun: options.dryRun, diagnostics, marks: { started, scanned, ended: performance.now() }, load, hiddenByCompaction });
  } finally {
    await smallChains?.runner.close();
    await writer.close();
  }
}

/**
 * The session as compaction plans it. A small session compacted inline is read whole (see
 * loadWhole). A larger version-3 file is scanned in parallel and lightened: its chains go to the
 * workers as lines of the file. An older file is first rewritten as version 3, a line at a time
 * from its scan (main/migrate-scanned.ts), then scanned like any other; a dry run, which must not
 * rewrite it, plans on the full entries in memory instead.
 */
async function loadForCompaction(file: string, runner: ChainRunner, options: CompactOptions): Promise<{ loaded: LoadedSession; migrated: boolean }> {
  if (runner.workers === 0 && isSmallSession(await sizeOf(file))) return loadWhole(file, options);
  const scanned = await scanSession(file, runner);
  refuseJoined(scanned, options);
  if (scanned.originalVersion >= CURRENT_SESSION_VERSION) return { loaded: await wholeIfEdited(scanned), migrated: false };
  if (options.dryRun) return { loaded: await readSession(file), migrated: false };
  await migrateScannedFile(scanned, { dropTruncatedTail: options.dropTruncatedTail });
  return { loaded: await wholeIfEdited(await scanSession(file, runner)), migrated: true };
}

/**
 * A small session on the calling thread, read whole: one JSON.parse per line, no refs, no
 * lightening. The entries appended and the spill files written are the same bytes as on the
 * scanned route (test/compact-routes.test.ts).
 */
async function loadWhole(file: string, options: CompactOptions): Promise<{ loaded: LoadedSession; migrated: boolean }> {
  const loaded = await readSession(file);
  refuseJoined(loaded, options);
  if (loaded.originalVersion >= CURRENT_SESSION_VERSION || options.dryRun) return { loaded, migrated: false };
  return { loaded: await migrateFileInPlace(loaded, { dropTruncatedTail: options.dropTruncatedTail }), migrated: true };
}

function refuseJoined(loaded: LoadedSession, options: CompactOptions): void {
  const joined = loaded.joinedLines[0];
  if (joined !== undefined && options.refuseJoinedLines) {
    throw new SessionFileError("joined-entries", loaded.file, "line holds entries glued together, which pi ignores", joined);
  }
}

/** The file's size; a file that cannot be read is left to the reader, whose error names it. */
async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.promises.stat(file)).size;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * A session with pi 1.6's context edits is planned on its whole entries: an edited message is not
 * the line in the file that a worker would read, so its chain goes to the worker as edited, from
 * memory. Sessions without edits keep the file road.
 */
async function wholeIfEdited(scanned: LoadedSession): Promise<LoadedSession> {
  if (!(await driveSteps(holdsContextEdits(scanned.entries)))) return scanned;
  return readSession(scanned.file);
}

/** Whether any entry is a context edit, looked for in slices (a scan may hold millions of entries). */
function* holdsContextEdits(entries: readonly SessionEntry[]): Steps<boolean> {
  for (let i = 0; i < entries.length; i++) {
    if (stepDue(i)) yield;
    if (entries[i]!.type === "context_edit") return true;
  }
  return false;
}

/**
 * Where each chain's task gets its span. From a scan, the file's lines; from whole entries (a small
 * session inline, context edits, an old file in a dry run), the messages as this thread holds them.
 */
function chainSource(model: SessionModel): ChainSource {
  if (model.loaded.lightened) return { kind: "file", fileSlice: (plan: DeterministicPlan) => fileSliceOf(model, plan) };
  return { kind: "memory" };
}

/** The inline runner small chains of the file road take instead of the pool (CompactOptions.inlineChainBytes); none inline or in memory. */
function smallChainsFor(model: SessionModel, runner: ChainRunner, options: CompactOptions): { runner: ChainRunner; belowBytes: number } | undefined {
  if (runner.workers === 0 || options.inlineChainBytes <= 0 || !model.loaded.lightened) return undefined;
  return { runner: createChainRunner(0), belowBytes: options.inlineChainBytes };
}

/** The chain a crashed or abandoned run left open, when the policy is on (issue 13). */
function openChainInput(model: SessionModel, options: CompactOptions, isProtected: ProtectionPredicate): { openChain?: OpenChainInput } {
  if (!options.openChains.enabled) return {};
  const open = detectOpenChain(model.messages, isProtected);
  return open ? { openChain: { open, settings: options.openChains } } : {};
}

interface Writer {
  /** Writes one entry; durable once `sync` resolves. */
  append: AppendEntry;
  sync: () => Promise<void>;
  blobDir: string;
  close(): Promise<void>;
}

async function openWriter(model: SessionModel, options: CompactOptions): Promise<Writer> {
  if (options.dryRun) {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-dry-run-"));
    return {
      append: async () => undefined,
      sync: async () => undefined,
      blobDir: scratch,
      close: async () => fs.rmSync(scratch, { recursive: true, force: true }),
    };
  }
  const appender = await SessionAppender.open(model.loaded, { dropTruncatedTail: options.dropTruncatedTail });
  return {
    append: async (customType, data, dataJson) => {
      await appender.appendCustom(customType, data, { durable: false, ...(dataJson === undefined ? {} : { dataJson }) });
    },
    sync: () => appender.sync(),
    blobDir: model.blobDir,
    close: () => appender.close(),
  };
}

function spillSettings(model: SessionModel, options: CompactOptions, blobDir: string): SpillSettings {
  const mode = fs.statSync(model.loaded.file).mode;
  return { blobDir, threshold: options.spillThreshold, previewBytes: options.spillPreviewBytes, ...spillModesFor(mode) };
}
