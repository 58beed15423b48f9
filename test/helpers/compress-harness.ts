/**
 * Runs compressEligible on a real session file the way `chainpress compact` does, with hooks to
 * fail appends or inject worker faults. Everything goes through the real reader, appender and
 * (when workers > 0) the real piscina pool.
 */

import fs from "node:fs";
import os from "node:os";
import { detectChains, detectOpenChain } from "../../src/core/detect-chains.js";
import type { OpenChainSettings } from "../../src/core/open-chain-policy.js";
import type { OpenChainInput } from "../../src/main/compress-open-chain.js";
import { makeProtectionPredicate, type ProtectionPredicate } from "../../src/core/protection.js";
import type { ChainRange } from "../../src/core/prune-types.js";
import { SessionAppender } from "../../src/io/append-session.js";
import { spillModesFor } from "../../src/io/write-spill.js";
import type { AppendEntry } from "../../src/main/append-entry.js";
import { createChainRunner, type ChainRunner } from "../../src/main/chain-runner.js";
import { compressEligible, type CompressEligibleResult } from "../../src/main/compress-eligible.js";
import { DiagnosticSink } from "../../src/main/diagnostic-sink.js";
import type { AgentMessage } from "../../src/core/session-types.js";
import { fileSliceOf } from "../../src/main/file-slice.js";
import type { DeterministicPlan } from "../../src/main/plan-chains.js";
import { scanSession } from "../../src/main/scan-session.js";
import { taskSliceOf } from "../../src/main/spool-slice.js";
import { createSpoolDir, removeSpoolDir } from "../../src/io/spool.js";
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
  faultFor?: (chain: ChainRange) => TaskFault | undefined;
  maxInFlight?: number;
  diagnostics?: DiagnosticSink;
  /**
   * "memory" (default): in-memory messages, msgpack to the workers (the live flush's path).
   * "file": the parallel scan and lightened entries, workers read their lines.
   * "spool": the same scan spooling the bulk, workers assemble from the spool (`chainpress compact`).
   */
  path?: "memory" | "file" | "spool";
  /** Archive older outputs of a chain still open at the end of the session (issue 13). */
  openChains?: OpenChainSettings;
  /** Recovery-grace keys (outputs the policy must leave alone). */
  graceKeys?: ReadonlySet<string>;
  /** Called with the spool folder once the scan wrote it ("spool" path), before any chain runs. */
  afterScan?: (spoolDir: string) => void;
}

export interface HarnessRun {
  model: SessionModel;
  result: CompressEligibleResult;
  diagnostics: DiagnosticSink;
}

export async function compressFile(file: string, options: HarnessOptions = {}): Promise<HarnessRun> {
  const runner = options.runner ?? createChainRunner(options.workers ?? 0);
  const spillThreshold = options.spillThreshold ?? 65536;
  const spoolDir = options.path === "spool" ? createSpoolDir(os.tmpdir(), file) : undefined;
  const spool = spoolDir ? { spool: { dir: spoolDir, spillThreshold, previewBytes: 2048 } } : {};
  const model = options.path === "file" || options.path === "spool" ? modelOf(await scanSession(file, runner, spool)) : await loadSessionModel(file);
  if (spoolDir) options.afterScan?.(spoolDir);
  const isProtected = makeProtectionPredicate({ protectedTools: options.protectedTools ?? [], protectedPaths: options.protectedPaths ?? ["**/skills/**/*.md"] });
  const appender = await SessionAppender.open(model.loaded);
  const durable: AppendEntry = async (customType, data, dataJson) => void (await appender.appendCustom(customType, data, { durable: false, ...(dataJson === undefined ? {} : { dataJson }) }));
  const append = options.wrapAppend ? options.wrapAppend(durable) : durable;
  const diagnostics = options.diagnostics ?? new DiagnosticSink(append);
  try {
    const result = await compressEligible({
      messages: model.messages,
      chains: detectChains(model.messages, isProtected),
      state: model.state,
      rollingWindow: options.rollingWindow ?? 0,
      append,
      sync: () => appender.sync(),
      diagnostics,
      spill: { blobDir: model.blobDir, threshold: spillThreshold, previewBytes: 2048, ...spillModesFor(fs.statSync(file).mode) },
      runner,
      now: () => 1_800_000_000_000,
      ...(options.path === "file" ? { fileSlice: (plan: DeterministicPlan) => ({ fileSlice: fileSliceOf(model, plan.inner) }) } : {}),
      ...(options.path === "spool" ? { fileSlice: (plan: DeterministicPlan) => taskSliceOf(model, plan, spoolDir) } : {}),
      ...(options.faultFor ? { faultFor: options.faultFor } : {}),
      ...(options.maxInFlight ? { maxInFlight: options.maxInFlight } : {}),
      ...(options.graceKeys ? { graceKeys: options.graceKeys } : {}),
      ...openChainOf(model.messages, isProtected, options.openChains),
    });
    return { model, result, diagnostics };
  } finally {
    await appender.close();
    if (!options.runner) await runner.close();
    if (spoolDir) removeSpoolDir(spoolDir);
  }
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
