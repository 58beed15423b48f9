/**
 * Per-stage costs on one ~1M-character chain, with tinybench: the stages of a compaction one at
 * a time (the main-thread ones and the worker ones), and, side by side, the alternatives to the
 * msgpack slice hand-off that were measured (v8 structured-clone serialisation, JSON, raw bytes).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { pack, unpack } from "msgpackr";
import { Bench, type Task } from "tinybench";
import { buildBackfilledIndexData } from "../../src/core/chain-entry.js";
import { contentHash } from "../../src/core/content-hash.js";
import { CUSTOM_TYPE_INDEX } from "../../src/core/custom-types.js";
import { buildDeterministicBody } from "../../src/core/deterministic-body.js";
import { detectChains } from "../../src/core/detect-chains.js";
import { loadHasher, spillDigestOf, type Hasher } from "../../src/core/digest.js";
import { outputFields, spanOutputs } from "../../src/core/extract-records.js";
import { SessionAppender } from "../../src/io/append-session.js";
import { readSession } from "../../src/io/read-session.js";
import { settleSpillFiles, stageSpillFiles } from "../../src/io/write-spill.js";
import { measureContext } from "../../src/main/context-size.js";
import { loadSessionModel } from "../../src/main/session-model.js";
import { loadChainMaterial, type ChainMaterial } from "./chain-material.js";

export interface StageResult {
  stage: string;
  /** Where it runs in chainpress: main thread, worker, or an alternative not in use. */
  where: "main" | "worker" | "alternative";
  meanMs: number;
  p99Ms: number;
  rmePct: number;
  samples: number;
  /** Characters the operation covers, for the per-M-char cost. */
  chars: number;
  msPerMchars: number;
}

interface StageDef {
  stage: string;
  where: StageResult["where"];
  chars: number;
  fn: () => unknown;
  /** Untimed preparation before every run (tinybench beforeEach). */
  beforeEach?: () => Promise<void>;
}

export async function runStageBench(fixtureFile: string, timeMs: number): Promise<StageResult[]> {
  const m = await loadChainMaterial(fixtureFile);
  const hasher = await loadHasher();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-stages-"));
  const cleanups: Array<() => unknown> = [];
  try {
    const defs = [...sessionStages(fixtureFile, m), ...chainStages(m, hasher), ...(await ioStages(m, scratch, cleanups)), ...alternativeStages(m)];
    const bench = new Bench({ name: "stages", time: timeMs, warmupTime: Math.min(200, timeMs), throws: true });
    for (const def of defs) bench.add(def.stage, def.fn, def.beforeEach ? { beforeEach: def.beforeEach } : {});
    const tasks = await bench.run();
    return defs.map((def, i) => resultOf(def, tasks[i]!));
  } finally {
    for (const cleanup of cleanups) await cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function resultOf(def: StageDef, task: Task): StageResult {
  const r = task.result;
  if (!("latency" in r)) throw new Error(`stage ${def.stage} did not complete (${r.state})`);
  return { stage: def.stage, where: def.where, meanMs: r.latency.mean, p99Ms: r.latency.p99, rmePct: r.latency.rme, samples: r.latency.samplesCount, chars: def.chars, msPerMchars: r.latency.mean / (def.chars / 1e6) };
}

/** Whole-session main-thread passes that CompactReport.stageMs does not cover. */
function sessionStages(file: string, m: ChainMaterial): StageDef[] {
  const chars = m.chars;
  let fresh = m.model;
  // measureContext caches each message's JSON length: a fresh model per run measures a first call.
  const freshModel = async () => void (fresh = await loadSessionModel(file));
  return [
    { stage: "read+parse (readSession)", where: "main", chars, fn: () => readSession(file) },
    { stage: "load (readSession+modelOf)", where: "main", chars, fn: () => loadSessionModel(file) },
    { stage: "detect (detectChains)", where: "main", chars, fn: () => detectChains(m.model.messages) },
    { stage: "context, first call (measureContext)", where: "main", chars, fn: () => measureContext(fresh), beforeEach: freshModel },
    { stage: "context, repeat call (lengths cached)", where: "main", chars, fn: () => measureContext(m.model) },
  ];
}

function chainStages(m: ChainMaterial, hasher: Hasher): StageDef[] {
  const bigChars = m.big.reduce((n, o) => n + o.resultText.length, 0);
  const bigBytes = m.big.map((o) => Buffer.from(o.resultText, "utf8"));
  const protectedIds = new Set(m.chain.protectedToolCallIds);
  return [
    { stage: "encode (msgpackr pack + copy)", where: "main", chars: m.chars, fn: () => new Uint8Array(pack(m.inner)) },
    { stage: "decode (msgpackr unpack)", where: "worker", chars: m.chars, fn: () => unpack(m.encoded) },
    { stage: "extract (spanOutputs)", where: "worker", chars: m.chars, fn: () => [...spanOutputs(m.inner, protectedIds, () => false)].map(outputFields) },
    { stage: "hash xxh64 (spill digest)", where: "worker", chars: bigChars, fn: () => bigBytes.map((b) => spillDigestOf(hasher, b)) },
    { stage: "hash sha1 (contentHash)", where: "worker", chars: bigChars, fn: () => m.big.map((o) => contentHash(o.toolName, o.resultText)) },
    { stage: "body (deterministic body)", where: "worker", chars: m.chars, fn: () => buildDeterministicBody(m.records, m.refs.map((r) => r.shortId)) },
  ];
}

/** Spill write and index append, each with its fsync, on scratch files. */
async function ioStages(m: ChainMaterial, scratch: string, cleanups: Array<() => unknown>): Promise<StageDef[]> {
  const big = m.big[0] ?? m.outputs[0]!;
  const bytes = Buffer.from(big.resultText, "utf8");
  const target = { blobDir: path.join(scratch, "blobs"), fileMode: 0o644, dirMode: 0o755 };
  fs.mkdirSync(target.blobDir);
  let n = 0;
  const appender = await scratchAppender(scratch);
  cleanups.push(() => appender.close());
  const kept = m.records.filter((r) => r.resultText.length < 65536);
  const indexData = buildBackfilledIndexData(kept, m.refs.slice(0, kept.length));
  const keptChars = kept.reduce((c, r) => c + r.resultText.length, 0);
  const entryBytes = Buffer.from(`${JSON.stringify({ type: "custom", customType: CUSTOM_TYPE_INDEX, data: indexData })}\n`, "utf8");
  const rawFd = fs.openSync(path.join(scratch, "raw-append.jsonl"), "a");
  cleanups.push(() => fs.closeSync(rawFd));
  return [
    { stage: "spill (write, 1 file)", where: "worker", chars: big.resultText.length, fn: () => stageSpillFiles(target, [{ fileName: `s${n++}.txt`, bytes }]) },
    { stage: "spill (write+fsync+rename, 1 file)", where: "main", chars: big.resultText.length, fn: () => settleSpillFiles(target, stageSpillFiles(target, [{ fileName: `s${n++}.txt`, bytes }])) },
    { stage: "append (index entry, stringify+write+fsync)", where: "main", chars: keptChars, fn: () => appender.appendCustom(CUSTOM_TYPE_INDEX, indexData) },
    { stage: "  append part: JSON.stringify + utf8 only", where: "main", chars: keptChars, fn: () => Buffer.from(JSON.stringify(indexData), "utf8") },
    { stage: "  append part: write + fsync only", where: "main", chars: keptChars, fn: () => writeAndSync(rawFd, entryBytes) },
  ];
}

function writeAndSync(fd: number, bytes: Buffer): void {
  fs.writeSync(fd, bytes);
  fs.fsyncSync(fd);
}

async function scratchAppender(scratch: string): Promise<SessionAppender> {
  const file = path.join(scratch, "append.jsonl");
  fs.writeFileSync(file, `${JSON.stringify({ type: "session", version: 3, id: "bench", timestamp: new Date(0).toISOString(), cwd: scratch })}\n`);
  return SessionAppender.open(await readSession(file));
}

/** Hand-off designs not used by chainpress, measured on the same chain for comparison. */
function alternativeStages(m: ChainMaterial): StageDef[] {
  const serialized = v8.serialize(m.inner);
  const json = Buffer.from(JSON.stringify(m.inner), "utf8");
  return [
    { stage: "alt encode: v8.serialize (structured clone)", where: "alternative", chars: m.chars, fn: () => v8.serialize(m.inner) },
    { stage: "alt decode: v8.deserialize", where: "alternative", chars: m.chars, fn: () => v8.deserialize(serialized) },
    { stage: "alt encode: JSON.stringify + utf8", where: "alternative", chars: m.chars, fn: () => Buffer.from(JSON.stringify(m.inner), "utf8") },
    { stage: "alt decode: JSON.parse", where: "alternative", chars: m.chars, fn: () => JSON.parse(json.toString("utf8")) },
    { stage: "alt encode: copy raw JSONL bytes", where: "alternative", chars: m.chars, fn: () => Buffer.from(m.rawLines) },
    { stage: "alt decode: parse raw JSONL lines", where: "alternative", chars: m.chars, fn: () => parseLines(m.rawLines) },
  ];
}

function parseLines(bytes: Buffer): unknown[] {
  return bytes.toString("utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as unknown);
}
