/**
 * Runs one Node program as a fresh child process and measures the WHOLE process, start-up
 * included: wall time from spawn to exit (parent clock), CPU time of all its threads and its peak
 * RSS (from the rusage preload, see rusage-preload.cts). stdout goes to a file, so a large output
 * costs the child a write, as it would in a shell redirect; stderr is kept for error reports.
 */

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { RusageRecord } from "./rusage-types.js";

export interface ProcessRequest {
  /** Node script and its arguments. */
  script: string;
  args: readonly string[];
  /** Where the child's stdout is written. */
  stdoutFile: string;
  /** Folder for the rusage file. */
  scratchDir: string;
  /** Extra node flags (before --require). */
  nodeFlags?: readonly string[];
}

export interface ProcessMeasure {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  /** user + system CPU of all threads, ms; NaN when the child died before writing its rusage. */
  cpuMs: number;
  userMs: number;
  systemMs: number;
  /** Peak resident set size of the whole process, bytes. */
  peakRssBytes: number;
  /** CPU of the main thread alone, ms; NaN where it cannot be read (not Linux). */
  mainThreadCpuMs: number;
  stderr: string;
}

/** The compiled preload (.cts compiles to .cjs); under vitest this module runs from bench/. */
export function preloadFile(): string {
  const here = fileURLToPath(import.meta.url);
  const dir = here.endsWith(".js") ? path.dirname(here) : path.resolve(path.dirname(here), "..", "..", "dist", "bench", "lib");
  return path.join(dir, "rusage-preload.cjs");
}

/**
 * A child still running after this long is killed, and its round fails with that said: Node 20
 * can deadlock in its platform's task draining (nodejs/node#54918), and a bench run once waited
 * on such a child for good. The largest case (200x1M) takes well under a minute here.
 */
const CHILD_DEADLINE_MS = 10 * 60_000;

/** Keep only the end of a long stderr: the cause of a failure is printed last. */
const STDERR_KEEP = 64 * 1024;

export function runMeasured(request: ProcessRequest): Promise<ProcessMeasure> {
  const rusageFile = path.join(request.scratchDir, `rusage-${process.pid}-${performance.now().toFixed(0)}.json`);
  const stdoutFd = fs.openSync(request.stdoutFile, "w");
  const args = [...(request.nodeFlags ?? []), "--require", preloadFile(), request.script, ...request.args];
  return new Promise((resolve, reject) => {
    let stderr = "";
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["ignore", stdoutFd, "pipe"], env: { ...process.env, CHAINPRESS_RUSAGE_OUT: rusageFile } });
    const deadline = setTimeout(() => {
      stderr += `\n(bench: killed after ${CHILD_DEADLINE_MS / 1000} s without exiting)`;
      child.kill("SIGKILL");
    }, CHILD_DEADLINE_MS);
    // stdio[2] is "pipe", so stderr exists.
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    child.on("error", (error) => {
      clearTimeout(deadline);
      fs.closeSync(stdoutFd);
      reject(error);
    });
    child.on("close", (exitCode, signal) => {
      clearTimeout(deadline);
      const wallMs = performance.now() - started;
      fs.closeSync(stdoutFd);
      const rusage = readRusage(rusageFile);
      const userMs = rusage ? rusage.usage.userCPUTime / 1000 : Number.NaN;
      const systemMs = rusage ? rusage.usage.systemCPUTime / 1000 : Number.NaN;
      const peakRssBytes = rusage ? rusage.usage.maxRSS * 1024 : Number.NaN;
      const mainThreadCpuMs = rusage?.mainThreadCpuMs ?? Number.NaN;
      resolve({ exitCode, signal, wallMs, cpuMs: userMs + systemMs, userMs, systemMs, peakRssBytes, mainThreadCpuMs, stderr });
    });
  });
}

function readRusage(file: string): RusageRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as RusageRecord;
  } catch {
    return undefined;
  } finally {
    fs.rmSync(file, { force: true });
  }
}
