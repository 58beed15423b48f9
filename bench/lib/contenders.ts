/**
 * The programs bench:compare runs, each as users would run it (a fresh `node` process on a fresh
 * copy of the session; the CLI with its executable's node flags), and how each one's output is checked and read. Upstream and chainpress
 * get the same protection settings, so they compress the same chains.
 */

import fs from "node:fs";
import path from "node:path";
import type { PhaseMs } from "../../src/main/compact-report.js";
import { cliNodeFlags } from "./cli-node-flags.js";
import { runMeasured, type ProcessMeasure } from "./measured-process.js";
import { freshCopy, spillSizes } from "./scratch-copy.js";

/** Issue 10's comparison setting: `todowrite` outputs are protected (kept in the context). */
export const PROTECTED_TOOLS = "todowrite";

export interface Contender {
  /** "upstream" or "workers=N". */
  label: string;
  kind: "upstream" | "chainpress";
  workers?: number;
}

export interface Sample extends ProcessMeasure {
  contender: string;
  round: number;
  /** Exited 0 and its report says it succeeded. */
  ok: boolean;
  /** Why a run is not ok. */
  failure?: string;
  fileBytes: number;
  compressed: number;
  appendedBytes: number;
  appendedEntries: number;
  spillSizes: number[];
  /** chainpress only: from its --json report (measured during the compaction, inside the process). */
  eventLoopMaxMs?: number;
  reportPeakRssBytes?: number;
  /** The compaction's own wall time and its phases (CompactReport.wallMs, phaseMs). */
  reportWallMs?: number;
  phaseMs?: PhaseMs;
}


export function contendersFor(workerCounts: readonly number[], withUpstream: boolean): Contender[] {
  const ours = workerCounts.map((workers): Contender => ({ label: `workers=${workers}`, kind: "chainpress", workers }));
  return withUpstream ? [{ label: "upstream", kind: "upstream" }, ...ours] : ours;
}

export interface RunContext {
  fixture: string;
  round: number;
  cliFile: string;
  peerFile?: string;
}

/** One measured run of one contender on a fresh copy; the copy is removed afterwards. */
export async function runContender(contender: Contender, context: RunContext): Promise<Sample> {
  const copy = freshCopy(context.fixture, contender.label.replace(/\W/g, ""));
  try {
    const fileBytes = fs.statSync(copy.file).size;
    const stdoutFile = path.join(copy.dir, "stdout.txt");
    const nodeFlags = contender.kind === "chainpress" ? cliNodeFlags(context.cliFile) : [];
    const measure = await runMeasured({ script: scriptOf(contender, context), nodeFlags, args: argsOf(contender, copy), stdoutFile, scratchDir: copy.dir });
    const base = { ...measure, contender: contender.label, round: context.round, fileBytes, spillSizes: spillSizes(copy.dir) };
    const read = contender.kind === "chainpress" ? readChainpress(stdoutFile) : readUpstream(measure.stderr);
    const appendedBytes = contender.kind === "chainpress" ? fs.statSync(copy.file).size - fileBytes : fs.statSync(stdoutFile).size;
    const exited = measure.exitCode === 0 ? undefined : `exit ${measure.exitCode ?? measure.signal}`;
    const failure = exited ?? read.failure;
    return { ...base, ...read.values, appendedBytes, ok: failure === undefined, ...(failure ? { failure } : {}) };
  } finally {
    copy.remove();
  }
}

function scriptOf(contender: Contender, context: RunContext): string {
  if (contender.kind === "chainpress") return context.cliFile;
  if (!context.peerFile) throw new Error("upstream contender without a peer file");
  return context.peerFile;
}

function argsOf(contender: Contender, copy: { dir: string; file: string }): string[] {
  if (contender.kind === "upstream") {
    // --now 1: every chain counts as old; --compact: rolling window 0, as chainpress's default.
    return [copy.file, "--compact", "--now", "1", "--protected-tools", PROTECTED_TOOLS, "--session-dir", copy.dir, "--report"];
  }
  return ["compact", copy.file, "--workers", String(contender.workers), "--json", "--force", "--protected-tools", PROTECTED_TOOLS];
}

type Read = { values: Pick<Sample, "compressed" | "appendedEntries"> & Partial<Pick<Sample, "eventLoopMaxMs" | "reportPeakRssBytes" | "reportWallMs" | "phaseMs">>; failure?: string };

interface CliJson {
  ok: boolean;
  sessions: Array<{ ok: boolean; report?: { compressed: string[]; appendedEntries: number; eventLoopMaxMs: number; peakRssBytes: number; wallMs: number; phaseMs: PhaseMs } }>;
}

function readChainpress(stdoutFile: string): Read {
  const empty = { compressed: 0, appendedEntries: 0 };
  let json: CliJson;
  try {
    json = JSON.parse(fs.readFileSync(stdoutFile, "utf8")) as CliJson;
  } catch (error) {
    return { values: empty, failure: `--json output unreadable: ${(error as Error).message}` };
  }
  const report = json.sessions[0]?.report;
  if (!report) return { values: empty, failure: "--json output has no report" };
  const values = {
    compressed: report.compressed.length,
    appendedEntries: report.appendedEntries,
    eventLoopMaxMs: report.eventLoopMaxMs,
    reportPeakRssBytes: report.peakRssBytes,
    reportWallMs: report.wallMs,
    phaseMs: report.phaseMs,
  };
  return json.ok && json.sessions[0]!.ok ? { values } : { values, failure: "--json report says the session failed" };
}

/** The peer's --report is one JSON object on the last stderr line. */
function readUpstream(stderr: string): Read {
  const last = stderr.trim().split("\n").pop() ?? "";
  try {
    const report = JSON.parse(last) as { compressed: number; appendedLines: number };
    return { values: { compressed: report.compressed, appendedEntries: report.appendedLines } };
  } catch {
    return readCutReport(last);
  }
}

/**
 * A report line longer than the stderr kept (thousands of block ids) has lost its start: its
 * end still names the chain entries appended, one per chain compressed, and the lines.
 */
function readCutReport(tail: string): Read {
  const chains = /"context-prune-chain":(\d+)/.exec(tail)?.[1];
  const lines = /"appendedLines":(\d+)/.exec(tail)?.[1];
  if (chains === undefined || lines === undefined) return { values: { compressed: 0, appendedEntries: 0 }, failure: "no --report line on stderr" };
  return { values: { compressed: Number(chains), appendedEntries: Number(lines) } };
}
