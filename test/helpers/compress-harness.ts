/**
 * Runs compressEligible on a real session file the way `chainpress compact` does, with hooks to
 * fail appends or inject worker faults. Everything goes through the real reader, appender and
 * (when workers > 0) the real piscina pool.
 */

import fs from "node:fs";
import { detectChains, detectOpenChain } from "../../src/core/detect-chains.js";
import type { OpenChainSettings } from "../../src/core/open-chain-policy.js";
import type { OpenChainInput } from "../../src/main/compress-open-chain.js";
import { makeProtectionPredicate, type ProtectionPredicate } from "../../src/core/protection.js";
import type { ChainRange } from "../../src/core/prune-types.js";
import { SessionAppender, type DataJson } from "../../src/io/append-session.js";
import { spillModesFor } from "../../src/io/write-spill.js";
import type { AppendEntry } from "../../src/main/append-entry.js";
import { createChainRunner, type ChainRunner } from "../../src/main/chain-runner.js";
import { compressEligible, type ChainSource, type CompressEligibleResult } from "../../src/main/compress-eligible.js";
import { DiagnosticSink } from "../../src/main/diagnostic-sink.js";
import type { AgentMessage } from "../../src/core/session-types.js";
import { fileSliceFromLines, fileSliceOf } from "../../src/main/file-slice.js";
import { readEntryLines, type EntryLines } from "../../src/io/entry-lines.js";
import type { DeterministicPlan } from "../../src/main/plan-chains.js";
import { scanSession } from "../../src/main/scan-session.js";
import { loadSessionModel, modelOf, type SessionModel } from "../../src/main/session-model.js";
import type { TaskFault } from "../../src/workers/chain-task.js";

export interface HarnessOptions {
  workers?: number;
  runner?: ChainRunner;
  rollingWindow?: number;
  protectedTools?: string[];
  protectedPaths?: string[];
  spillThreshold?: number;
  /** Wrap the durable appender (to make some appends fail). */
  wrapAppend?: (append: AppendEntry) => AppendEntry;
  /** Wrap the appender's fsync (to watch what runs while one is in flight). */
  wrapSync?: (sync: () => Promise<void>) => () => Promise<void>;
  faultFor?: (chain: ChainRange) => TaskFault | undefined;
  maxInFlight?: number;
  diagnostics?: DiagnosticSink;
  /**
   * "memory" (default): in-memory messages, msgpack to the workers (the live flush's path).
   * "file": the parallel scan and lightened entries, workers read their lines and take the
   * outputs the scan located from the file's bytes (`chainpress compact`).
   * "lines": in-memory messages, workers read their lines from the file, found by entry id
   * (pi's `/pruner compact`).
   */
  path?: "memory" | "file" | "lines";
  /** Archive older outputs of a chain still open at the end of the session (issue 13). */
  openChains?: OpenChainSettings;
  /** Recovery-grace keys (outputs the policy must leave alone). */
  graceKeys?: ReadonlySet<string>;
  /** Called once the scan ("file" path) or the line index ("lines") has read the file, before any chain runs. */
  afterScan?: () => void;
}

export interface HarnessRun {
  model: SessionModel;
  result: CompressEligibleResult;
  diagnostics: DiagnosticSink;
}

export async function compressFile(file: string, options: HarnessOptions = {}): Promise<HarnessRun> {
  const runner = options.runner ?? createChainRunner(options.workers ?? 0);
  const spillThreshold = options.spillThreshold ?? 65536;
  const model = options.path === "file" ? modelOf(await scanSession(file, runner)) : await loadSessionModel(file);
  if (options.path === "file") options.afterScan?.();
  const isProtected = makeProtectionPredicate({ protectedTools: options.protectedTools ?? [], protectedPaths: options.protectedPaths ?? ["**/skills/**/*.md"] });
  const lines = options.path === "lines" ? await readEntryLines(file, async () => undefined) : undefined;
  if (lines) options.afterScan?.();
  const appender = await SessionAppender.open(model.loaded);
  // pi serialises the data it is given (`pi.appendEntry`): on its path the records made on the main thread are what gets written.
  const writes = (dataJson: DataJson | undefined) => (dataJson === undefined || options.path === "lines" ? {} : { dataJson });
  const durable: AppendEntry = async (customType, data, dataJson) => void (await appender.appendCustom(customType, data, { durable: false, ...writes(dataJson) }));
  const append = options.wrapAppend ? options.wrapAppend(durable) : durable;
  const diagnostics = options.diagnostics ?? new DiagnosticSink(append);
  try {
    const result = await compressEligible({
      messages: model.messages,
      chains: detectChains(model.messages, isProtected),
      state: model.state,
      rollingWindow: options.rollingWindow ?? 0,
      append,
      sync: (options.wrapSync ?? ((sync) => sync))(() => appender.sync()),
      diagnostics,
      spill: { blobDir: model.blobDir, threshold: spillThreshold, previewBytes: 2048, ...spillModesFor(fs.statSync(file).mode) },
      runner,
      now: () => 1_800_000_000_000,
      source: sourceOf(options.path, model, lines),
      ...(options.faultFor ? { faultFor: options.faultFor } : {}),
      ...(options.maxInFlight ? { maxInFlight: options.maxInFlight } : {}),
      ...(options.graceKeys ? { graceKeys: options.graceKeys } : {}),
      ...openChainOf(model.messages, isProtected, options.openChains),
    });
    return { model, result, diagnostics };
  } finally {
    await appender.close();
    if (!options.runner) await runner.close();
  }
}

/** The road the harness's `path` takes: the file's lines, or messages in memory (with their lines on the "lines" path). */
function sourceOf(path: HarnessOptions["path"], model: SessionModel, lines: EntryLines | undefined): ChainSource {
  if (path === "file") return { kind: "file", fileSlice: (plan: DeterministicPlan) => fileSliceOf(model, plan) };
  if (!lines) return { kind: "memory" };
  return { kind: "memory", linesOnDisk: (plan: DeterministicPlan) => fileSliceFromLines(lines, model.messages, (i) => model.messageEntry(i)?.id, plan) };
}

function openChainOf(messages: readonly AgentMessage[], isProtected: ProtectionPredicate, settings: OpenChainSettings | undefined): { openChain?: OpenChainInput } {
  const open = settings ? detectOpenChain(messages, isProtected) : undefined;
  return open && settings ? { openChain: { open, settings } } : {};
}

/** An appender wrapper that throws for the n-th append of a customType (1-based). */
export function failNth(customType: string, n: number): (append: AppendEntry) => AppendEntry {
  let seen = 0;
  return (append) => async (type, data, dataJson) => {
    if (type === customType && ++seen === n) throw new Error(`injected ${customType} append failure`);
    await append(type, data, dataJson);
  };
}
