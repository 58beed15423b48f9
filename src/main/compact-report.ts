/** The report of one compaction: what happened, what it saved, where the time went. */

import type { ImageTally } from "../core/billed-size.js";
import { CHARS_PER_TOKEN } from "../core/defaults.js";
import { formatReconstructWarning } from "../core/reconstruct.js";
import type { CompactionVisibility } from "../core/compaction-visibility.js";
import type { ChainRange, ChainSkip, DiagnosticKind } from "../core/prune-types.js";
import type { CompressEligibleResult } from "./compress-eligible.js";
import type { ContextSize } from "./context-size.js";
import type { DiagnosticSink } from "./diagnostic-sink.js";
import type { OpenChainOutcome } from "./compress-open-chain.js";
import type { LoadFigures } from "./load-monitor.js";
import type { SessionModel } from "./session-model.js";

export interface CompactReport {
  file: string;
  sessionId: string;
  /** True when a version-1/2 file was first rewritten as version 3. */
  migrated: boolean;
  dryRun: boolean;
  chains: { detected: number; closed: number; interrupted: number };
  /** Block ids written in this run, in chain order. */
  compressed: string[];
  /** Compressed chains that took the deterministic path. */
  deterministic: number;
  skipped: { total: number; byReason: Record<string, number>; chains: ChainSkip[] };
  /** Chains left alone because pi's context no longer shows them (start timestamps); `hidden` ones are compacted with includeCompacted. */
  hiddenByCompaction: CompactionVisibility & { included: boolean };
  recordsArchived: number;
  spilledFiles: number;
  spilledBytes: number;
  archivedChars: number;
  appendedEntries: number;
  /** Context size; an image counts as billed (core/billed-size.ts), the tallies say by which rule. */
  context: { beforeChars: number; afterChars: number; beforeTokens: number; afterTokens: number; beforeImages: ImageTally; afterImages: ImageTally };
  diagnostics: Record<DiagnosticKind, number>;
  warnings: string[];
  wallMs: number;
  /** Longest event-loop stall during the compaction, in milliseconds. */
  eventLoopMaxMs: number;
  /** Peak resident memory of the process during the compaction, in bytes. */
  peakRssBytes: number;
  /** Milliseconds per stage (worker stages summed over threads). */
  stageMs: Record<string, number>;
  /**
   * Where the wall time went, in order (they add up to wallMs): reading the file (the parallel
   * scan, the pool's start included, and a version-1/2 file's migration); from there to the first
   * chain task's start (the model, chain detection, the first plan: the main thread alone); the
   * chain tasks, first start to last end; and what follows them (the last commits, the context
   * measure). No chain task ran: all after the scan is `untilFirstChain`.
   */
  phaseMs: PhaseMs;
  /** The step for the chain still open at the end of the session (issue 13), when one was looked at. */
  openChain?: OpenChainOutcome;
}

export interface PhaseMs {
  scan: number;
  untilFirstChain: number;
  chains: number;
  afterChains: number;
}

/** performance.now() when the compaction started, its scan ended, and it ended. */
export interface PhaseMarks {
  started: number;
  scanned: number;
  ended: number;
}

export interface ReportInput {
  model: SessionModel;
  chains: readonly ChainRange[];
  result: CompressEligibleResult;
  before: ContextSize;
  after: ContextSize;
  migrated: boolean;
  dryRun: boolean;
  diagnostics: DiagnosticSink;
  marks: PhaseMarks;
  load: LoadFigures;
  /** What compaction-visibility found, and whether the hidden chains were compacted anyway. */
  hiddenByCompaction?: CompactionVisibility & { included: boolean };
}

/** Tokens of a context measure's characters (images are in them already, as billed). */
export function tokensOf(chars: number): number {
  return Math.round(chars / CHARS_PER_TOKEN);
}

export function buildCompactReport(input: ReportInput): CompactReport {
  const { result, model } = input;
  const byReason: Record<string, number> = {};
  for (const skip of result.skipped) byReason[skip.reason] = (byReason[skip.reason] ?? 0) + 1;
  const closed = input.chains.filter((c) => c.finalAssistantTimestamp !== null).length;
  return {
    file: model.loaded.file,
    sessionId: model.loaded.header.id,
    migrated: input.migrated,
    dryRun: input.dryRun,
    chains: { detected: input.chains.length, closed, interrupted: input.chains.length - closed },
    compressed: result.compressedEntries.map((e) => e.blockId),
    deterministic: result.compressedEntries.filter((e) => e.bodySource === "deterministic").length,
    skipped: { total: result.skipped.length, byReason, chains: result.skipped },
    hiddenByCompaction: input.hiddenByCompaction ?? { hidden: [], cut: [], included: false },
    recordsArchived: result.stats.recordsArchived,
    spilledFiles: result.stats.spilledFiles,
    spilledBytes: result.stats.spilledBytes,
    archivedChars: result.stats.archivedChars,
    appendedEntries: result.stats.appendedEntries,
    context: {
      beforeChars: input.before.chars,
      afterChars: input.after.chars,
      beforeTokens: tokensOf(input.before.chars),
      afterTokens: tokensOf(input.after.chars),
      beforeImages: input.before.images,
      afterImages: input.after.images,
    },
    diagnostics: { ...input.diagnostics.counters },
    warnings: [
      ...model.loaded.warnings.map((w) => w.message),
      ...model.reconstructWarnings.map(formatReconstructWarning),
      ...input.diagnostics.failures,
      ...result.skipped.filter((skip) => skip.permanent).map((skip) => `chain ${skip.startUserTimestamp} left uncompressed for good: ${skip.cause}`),
      ...(result.openChain?.failure ? [`open chain: older outputs left in the context: ${result.openChain.failure}`] : []),
    ],
    wallMs: input.marks.ended - input.marks.started,
    eventLoopMaxMs: input.load.eventLoopMaxMs,
    peakRssBytes: input.load.peakRssBytes,
    stageMs: { ...result.stats.stageMs },
    phaseMs: phasesOf(input.marks, result.stats.tasks),
    ...(result.openChain ? { openChain: result.openChain } : {}),
  };
}

function phasesOf(marks: PhaseMarks, tasks: { firstStart?: number; lastEnd?: number }): PhaseMs {
  const scan = marks.scanned - marks.started;
  if (tasks.firstStart === undefined || tasks.lastEnd === undefined) return { scan, untilFirstChain: marks.ended - marks.scanned, chains: 0, afterChains: 0 };
  return { scan, untilFirstChain: tasks.firstStart - marks.scanned, chains: tasks.lastEnd - tasks.firstStart, afterChains: marks.ended - tasks.lastEnd };
}
