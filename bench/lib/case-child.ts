/**
 * One end-to-end case in a fresh process (so peak RSS belongs to this case alone): copy the
 * fixture, compact the copy under an event-loop monitor, then measure the I/O floor of the same
 * bytes, optionally time the load phases on their own, and print one JSON line.
 * Usage: node dist/bench/lib/case-child.js '<CaseRequest JSON>'
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { detectChains } from "../../src/core/detect-chains.js";
import { createChainRunner, type ChainRunner } from "../../src/main/chain-runner.js";
import { compactSession } from "../../src/main/compact-session.js";
import type { CompactReport } from "../../src/main/compact-report.js";
import { measureContext } from "../../src/main/context-size.js";
import { loadSessionModel } from "../../src/main/session-model.js";
import type { CaseRequest, CaseResult, LoadTimings } from "./case-types.js";
import { withEventLoopMonitor } from "./event-loop.js";
import { startGcMonitor } from "./gc-monitor.js";
import { measureIoFloor, measureParseCpuMs } from "./io-floor.js";

async function main(request: CaseRequest): Promise<CaseResult> {
  const loadAvg = os.loadavg()[0]!;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-bench-"));
  try {
    const file = path.join(scratch, "session.jsonl");
    fs.copyFileSync(request.fixture, file);
    const fileBytes = fs.statSync(file).size;
    const runner = await warmRunner(request.workers);
    for (let i = 0; i < (request.warmups ?? 0); i++) await warmupCompaction(request.fixture, scratch, runner, i);
    const gc = startGcMonitor();
    const elu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const { value: report, delay } = await withEventLoopMonitor(() => compactSession({ file, runner }));
    const wallMs = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    const mainThreadBusy = performance.eventLoopUtilization(elu).utilization;
    const gcTotals = gc.stop();
    await runner.close();
    // maxRSS is in KiB; MB here is 10^6 bytes, the unit of fileMb and of the RSS budget.
    const peakRssMb = (process.resourceUsage().maxRSS * 1024) / 1e6;
    const appendedBytes = fs.statSync(file).size - fileBytes;
    const floor = await floorOf(request.fixture, scratch, report, appendedBytes);
    const parseCpuMs = measureParseCpuMs(request.fixture);
    const load = request.measureLoad ? await loadTimings(request.fixture, scratch) : undefined;
    const measured = { fileBytes, cpuMs: (user + system) / 1000, eventLoop: delay, mainThreadBusy, gc: gcTotals, peakRssMb, floor, parseCpuMs, loadAvg };
    return { ...resultOf(request, report, wallMs, appendedBytes), ...measured, ...(load ? { load } : {}) };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Start the pool and let its threads load, so thread start-up is not billed to the first chain. */
async function warmRunner(workers: number): Promise<ChainRunner> {
  const runner = createChainRunner(workers);
  await sleep(workers > 0 ? 300 : 0);
  return runner;
}

/** A throw-away compaction of another copy, so the measured one runs JIT-compiled code. */
async function warmupCompaction(fixture: string, scratch: string, runner: ChainRunner, i: number): Promise<void> {
  const dir = path.join(scratch, `warmup-${i}`);
  fs.mkdirSync(dir);
  const copy = path.join(dir, "session.jsonl");
  fs.copyFileSync(fixture, copy);
  await compactSession({ file: copy, runner });
  fs.rmSync(dir, { recursive: true, force: true });
}

function resultOf(request: CaseRequest, report: CompactReport, wallMs: number, appendedBytes: number) {
  return {
    fixture: request.fixture,
    workers: request.workers,
    wallMs,
    stageMs: report.stageMs,
    archivedChars: report.archivedChars,
    appendedBytes,
    appendedEntries: report.appendedEntries,
    spilledFiles: report.spilledFiles,
    spilledBytes: report.spilledBytes,
    compressed: report.compressed.length,
    skipped: report.skipped.total,
  };
}

/** I/O floor on a second fresh copy, with the spill sizes the compaction actually wrote. */
async function floorOf(fixture: string, scratch: string, report: CompactReport, appendedBytes: number) {
  const copy = path.join(scratch, "floor-session.jsonl");
  fs.copyFileSync(fixture, copy);
  const spillSizes = blobFileSizes(scratch);
  const floor = await measureIoFloor({ sessionFile: copy, scratchDir: scratch, appendedBytes, appendedEntries: report.appendedEntries, spillSizes });
  fs.rmSync(copy);
  return floor;
}

function blobFileSizes(scratch: string): number[] {
  const blobDir = fs.readdirSync(scratch).find((name) => name.endsWith("-blobs"));
  if (!blobDir) return [];
  const dir = path.join(scratch, blobDir);
  return fs.readdirSync(dir).map((name) => fs.statSync(path.join(dir, name)).size);
}

async function loadTimings(fixture: string, scratch: string): Promise<LoadTimings> {
  const copy = path.join(scratch, "load-session.jsonl");
  fs.copyFileSync(fixture, copy);
  let t = performance.now();
  const model = await loadSessionModel(copy);
  const loadMs = performance.now() - t;
  t = performance.now();
  detectChains(model.messages);
  const detectMs = performance.now() - t;
  t = performance.now();
  measureContext(model);
  return { loadMs, detectMs, contextMs: performance.now() - t };
}

main(JSON.parse(process.argv[2] ?? "{}") as CaseRequest).then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
