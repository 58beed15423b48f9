/**
 * In-process runs for the fault and fuzz tests: compressEligible wired the way compactSession
 * wires it (real reader, real durable appender, real spill writer, inline or pooled runner),
 * with hooks to fail appends, fsyncs and worker tasks. Plus the checks those tests share: the
 * in-memory state against a fresh reconstruction of the file, archived bodies read back through
 * the library (resolveRecordBody, digest-verified) against the originals, and chains compared
 * by what their refs name (a failed chain's reserved refs are not reused, so a healed session
 * may number refs differently from an uninterrupted one; the occurrences they name must match).
 */

import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { loadHasher } from "../../src/core/digest.js";
import { detectChains } from "../../src/core/detect-chains.js";
import { makeProtectionPredicate } from "../../src/core/protection.js";
import type { PruneState } from "../../src/core/prune-state.js";
import type { ChainRange } from "../../src/core/prune-types.js";
import { findRecords } from "../../src/core/query.js";
import { SessionAppender } from "../../src/io/append-session.js";
import { resolveRecordBody } from "../../src/io/read-spill.js";
import { blobDirFor } from "../../src/core/spill-layout.js";
import { spillModesFor } from "../../src/io/write-spill.js";
import type { AppendEntry } from "../../src/main/append-entry.js";
import { createChainRunner, type ChainRunner } from "../../src/main/chain-runner.js";
import { compressEligible, type CompressEligibleResult } from "../../src/main/compress-eligible.js";
import { DiagnosticSink } from "../../src/main/diagnostic-sink.js";
import { loadSessionModel, type SessionModel } from "../../src/main/session-model.js";
import type { ChainTaskResult, TaskFault } from "../../src/workers/chain-task.js";
import { Piscina } from "piscina";
import { originalOutputs } from "./cli-harness.js";
import { stableCli } from "./stress-session.js";

export interface FaultyRunOptions {
  workers?: number;
  runner?: ChainRunner;
  spillThreshold?: number;
  wrapAppend?: (append: AppendEntry) => AppendEntry;
  wrapSync?: (sync: () => Promise<void>) => () => Promise<void>;
  faultFor?: (chain: ChainRange) => TaskFault | undefined;
}

export interface FaultyRun {
  model: SessionModel;
  result: CompressEligibleResult;
}

/**
 * A piscina pool like chain-runner.ts poolRunner, but on the worker of the dist/ snapshot
 * (stress-session.ts stableCli): other test runs rebuild the live dist/ at any time, and a pool
 * starting a worker from a half-written dist/ fails every task.
 */
export function snapshotPoolRunner(workers: number): ChainRunner {
  // The bundled worker, beside the bundled executable (scripts/bundle.mjs).
  const filename = path.join(path.dirname(stableCli()), "compress-chain.worker.cjs");
  const pool = new Piscina({ filename, minThreads: workers, maxThreads: workers, idleTimeout: 5_000 });
  return {
    workers,
    run: (task) => pool.run(task, task.input.kind === "encoded" ? { transferList: task.input.chunks.map((chunk) => chunk.buffer as ArrayBuffer) } : {}) as Promise<ChainTaskResult>,
    close: () => pool.destroy(),
  };
}

export async function runFaulty(file: string, options: FaultyRunOptions = {}): Promise<FaultyRun> {
  const model = await loadSessionModel(file);
  const isProtected = makeProtectionPredicate({ protectedTools: [], protectedPaths: ["**/skills/**/*.md"] });
  const appender = await SessionAppender.open(model.loaded);
  const durable: AppendEntry = async (customType, data) => void (await appender.appendCustom(customType, data, { durable: false }));
  const append = options.wrapAppend ? options.wrapAppend(durable) : durable;
  const rawSync = () => appender.sync();
  const sync = options.wrapSync ? options.wrapSync(rawSync) : rawSync;
  const runner = options.runner ?? ((options.workers ?? 0) > 0 ? snapshotPoolRunner(options.workers!) : createChainRunner(0));
  try {
    const result = await compressEligible({
      messages: model.messages,
      chains: detectChains(model.messages, isProtected),
      state: model.state,
      rollingWindow: 0,
      append,
      sync,
      diagnostics: new DiagnosticSink(append),
      spill: { blobDir: model.blobDir, threshold: options.spillThreshold ?? 2000, previewBytes: 2048, ...spillModesFor(fs.statSync(file).mode) },
      runner,
      ...(options.faultFor ? { faultFor: options.faultFor } : {}),
    });
    return { model, result };
  } finally {
    await appender.close();
    if (!options.runner) await runner.close();
  }
}

/** Throws before the n-th append of `customType` (1-based): nothing is written for it. */
export function failAppendNth(customType: string, n: number, message = `injected ${customType} append failure`): (append: AppendEntry) => AppendEntry {
  let seen = 0;
  return (append) => async (type, data) => {
    if (type === customType && ++seen === n) throw new Error(message);
    await append(type, data);
  };
}

/** The n-th fsync reports failure (after the kernel may well have written the lines). */
export function failSyncNth(n: number): (sync: () => Promise<void>) => () => Promise<void> {
  let seen = 0;
  return (sync) => async () => {
    await sync();
    if (++seen === n) throw new Error("injected fsync failure");
  };
}

/** Semantic content of a state: chains by start, each with the occurrence keys its refs name. */
export interface CanonicalState {
  chains: Array<{ start: number; keys: string[]; body: string | undefined; bodySource: string | undefined }>;
  indexed: string[];
}

export function canonical(state: PruneState): CanonicalState {
  const keyOf = (ref: string): string => state.keyByRef.get(ref) ?? `?${ref}`;
  const chains = [...state.chains.values()]
    .map((c) => ({
      start: c.startUserTimestamp,
      keys: c.toolRefs.map(keyOf),
      // "Refs: t5, t6" names the same occurrences as "Refs: t1, t2" did in another numbering.
      body: c.rangeSummaryText?.replace(/\bt\d+\b/g, (ref) => keyOf(ref)),
      bodySource: c.bodySource,
    }))
    .sort((a, b) => a.start - b.start);
  return { chains, indexed: [...state.records.keys()].sort() };
}

/**
 * The run's in-memory state never claims more than the file holds: every indexed record, ref
 * and chain in memory is in a fresh reconstruction of the file. With `exact`, they are equal
 * (no write was left in doubt by a failed fsync).
 */
export async function expectMemoryMatchesFile(memory: PruneState, file: string, exact = true): Promise<void> {
  const disk = (await loadSessionModel(file)).state;
  for (const key of memory.records.keys()) expect(disk.records.has(key), `record ${key} in memory but not in the file`).toBe(true);
  for (const [ref, key] of memory.keyByRef) {
    if (disk.keyByRef.has(ref)) expect(disk.keyByRef.get(ref)).toBe(key);
  }
  for (const start of memory.chains.keys()) expect(disk.chains.has(start), `chain ${start} in memory but not in the file`).toBe(true);
  if (exact) {
    expect([...disk.records.keys()].sort()).toEqual([...memory.records.keys()].sort());
    expect([...disk.chains.keys()].sort()).toEqual([...memory.chains.keys()].sort());
  }
}

/**
 * Every indexed record's body, read back through the library (spill files digest-verified),
 * equals the original tool output read straight from the file's toolResult messages.
 * Returns { verified, lost }.
 */
/** The id in a session file's header (its first line). */
function sessionIdOf(file: string): string {
  const first = fs.readFileSync(file, "utf8").split("\n", 1)[0]!;
  return (JSON.parse(first) as { id: string }).id;
}

export async function verifyBodiesInProcess(file: string, state?: PruneState): Promise<{ verified: number; lost: string[] }> {
  const model = state ? undefined : await loadSessionModel(file);
  const s = state ?? model!.state;
  const hasher = await loadHasher();
  const originals = originalOutputs(file);
  const blobDir = model?.blobDir ?? blobDirFor(path.dirname(path.resolve(file)), sessionIdOf(file));
  const lost: string[] = [];
  let verified = 0;
  for (const [key, record] of s.records) {
    const body = await resolveRecordBody(record, hasher, blobDir);
    if (body.ok && originals.get(key) === body.text) verified++;
    else lost.push(`${key}: ${body.ok ? "differs from the original" : body.detail}`);
  }
  // Every short ref resolves to its record (what `query tN` does).
  for (const [ref, key] of s.keyByRef) {
    const found = findRecords(s, ref);
    if (found.length !== 1 || `${found[0]!.record.toolCallId}@${found[0]!.record.resultTimestamp}` !== key) lost.push(`${ref}: does not resolve to ${key}`);
  }
  return { verified, lost };
}

/** Files in the blob folder that are neither referenced nor temp leftovers must not exist; returns temp leftovers. */
export function blobFolderReport(blobDir: string, state: PruneState): { temps: string[]; unreferenced: string[] } {
  if (!fs.existsSync(blobDir) || !fs.statSync(blobDir).isDirectory()) return { temps: [], unreferenced: [] };
  const referenced = new Set([...state.records.values()].flatMap((r) => (r.spillPath ? [path.basename(r.spillPath)] : [])));
  const names = fs.readdirSync(blobDir);
  return {
    temps: names.filter((n) => n.startsWith(".tmp-")),
    unreferenced: names.filter((n) => !n.startsWith(".tmp-") && !referenced.has(n)),
  };
}
