/** `chainpress compact`: what `/pruner compact` does, over saved sessions, one after another. */

import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createChainRunner, type ChainRunner } from "../../main/chain-runner.js";
import type { RawCompactOptions } from "../commands/compact.js";
import { compactOne, type CompactFlags, type SessionOutcome } from "../compact-one.js";
import type { SessionSource } from "../live-session.js";
import { CliError, UsageError } from "../errors.js";
import { colorsEnabled, writeErr, writeOut, type CliIo } from "../output.js";
import type { ChainpressSettings } from "../../core/settings.js";
import { mapBudgetOf } from "../../core/archive-map.js";
import { heapGrowingPercentFor, withHeapGrowth } from "../inline-heap.js";
import { capWorkers } from "../options.js";
import { loadCliSettings, settingsJson, settingsLine } from "../settings.js";
import type { LoadedSettings } from "../../io/settings-file.js";
import { createProgress, type ProgressSink, type SessionStart } from "../progress.js";
import { expandSessionPaths } from "../session-files.js";
import { formatOutcome, formatTotals, runTotals } from "../summary.js";

/** Flags over the settings files: a flag given on the command line wins, the settings fill the rest. */
function flagsOf(raw: RawCompactOptions, settings: ChainpressSettings): CompactFlags {
  if (raw.out !== undefined && raw.dryRun) throw new UsageError("--out and --dry-run exclude each other (a dry run writes nothing)");
  const flags: CompactFlags = { dryRun: raw.dryRun === true, rollingWindow: raw.rollingWindow, includeCompacted: raw.includeCompacted === true, force: raw.force === true, repair: raw.repair === true, followLinks: raw.followLinks === true };
  if (raw.out !== undefined) flags.out = raw.out;
  flags.protectedTools = raw.protectedTools ?? settings.protectedTools;
  flags.protectedPaths = raw.protectedPaths ?? settings.protectedPaths;
  flags.spillThreshold = raw.spillThreshold ?? settings.spillThreshold;
  flags.spillPreviewBytes = settings.spillPreviewBytes;
  flags.recoveryGraceTurns = settings.recoveryGraceTurns;
  flags.openChains = { ...settings.openChains, enabled: settings.openChains.enabled && raw.openChains !== false };
  flags.render = { map: mapBudgetOf(settings.archiveMap) ?? false, stripFinalAssistantThinking: settings.chainCompression.stripFinalAssistantThinking };
  return flags;
}

/** What every session of one run shares. */
interface Run {
  io: CliIo;
  flags: CompactFlags;
  runner: ChainRunner;
  progress: ProgressSink;
  json: boolean;
  /** 0 when chains run inline. */
  workers: number;
  /** Sessions named on the command line (resolved), as opposed to found in a named folder. */
  named: Set<string>;
}

/**
 * Compacts the sessions named, with `pool` as the run's runner when the caller started one (the
 * caller closes it), else with a runner of its own, which it closes.
 */
export async function runCompact(io: CliIo, inputs: string[], raw: RawCompactOptions, pool?: ChainRunner): Promise<number> {
  // One pool for the whole run: starting worker threads per session would dominate small sessions.
  const workers = capWorkers(raw.workers);
  if (pool) return compactAll(io, inputs, raw, pool, workers);
  const runner = createChainRunner(workers.workers);
  try {
    return await compactAll(io, inputs, raw, runner, workers);
  } finally {
    await runner.close();
  }
}

async function compactAll(io: CliIo, inputs: string[], raw: RawCompactOptions, runner: ChainRunner, capped: { workers: number; note?: string }): Promise<number> {
  const settings = loadCliSettings(io);
  const flags = flagsOf(raw, settings.settings);
  const files = await expandSessionPaths(inputs, (file, why) => writeErr(io, `chainpress: note: skipped ${file}: ${why}`), flags.followLinks);
  if (files.length === 0) throw new CliError(`${inputs.join(", ")}: no *.jsonl session files found`);
  if (flags.out !== undefined && files.length !== 1) throw new UsageError("--out takes exactly one session file");
  const started = performance.now();
  const sizes = files.map(sizeOf);
  const json = raw.json === true;
  const progress = createProgress(io, { json, totalBytes: sizes.reduce((a, b) => a + b, 0) });
  if (capped.note) writeErr(io, `chainpress: note: ${capped.note}`);
  // A dry run is where users check what a real run would do, so it names the settings used.
  if (flags.dryRun && !json) await writeOut(io.stdout, `${settingsLine(settings)}\n\n`);
  const run: Run = { io, flags, runner, progress, json, workers: capped.workers, named: new Set(inputs.map((input) => path.resolve(input))) };
  const outcomes: SessionOutcome[] = [];
  try {
    for (const [i, file] of files.entries()) {
      outcomes.push(await compactWithProgress(run, { file, index: i + 1, count: files.length, bytes: sizes[i]! }));
    }
  } finally {
    progress.stop();
  }
  await printRun(io, { outcomes, workers: run.workers }, performance.now() - started, json, settings);
  return outcomes.every((o) => o.ok) ? 0 : 1;
}

async function compactWithProgress(run: Run, session: SessionStart): Promise<SessionOutcome> {
  run.progress.sessionStart(session);
  const source: SessionSource = run.named.has(path.resolve(session.file)) ? "named" : "in-folder";
  const outcome = await withHeapGrowth(heapGrowingPercentFor(run.workers, session.bytes), () =>
    compactOne(session.file, run.flags, run.runner, (p) => run.progress.chainDone(p), source),
  );
  run.progress.sessionEnd();
  if (outcome.error) writeErr(run.io, `chainpress: ${outcome.error}`);
  // Text summaries are printed as sessions finish, so a long run shows results early.
  if (!run.json && (outcome.report || outcome.skipped)) await writeOut(run.io.stdout, `${formatOutcome(outcome, colorsEnabled(run.io.stdout, run.io.env))}\n\n`);
  return outcome;
}

/** The sessions' outcomes, and the worker threads that compacted them (0: inline). */
interface RunOutcome {
  outcomes: SessionOutcome[];
  workers: number;
}

async function printRun(io: CliIo, { outcomes, workers }: RunOutcome, wallMs: number, json: boolean, settings: LoadedSettings): Promise<void> {
  const totals = runTotals(outcomes, wallMs);
  if (json) {
    const body = { ok: totals.failed === 0, workers, sessions: outcomes, totals, settings: settingsJson(settings) };
    await writeOut(io.stdout, `${JSON.stringify(body, null, 2)}\n`);
  } else if (outcomes.length > 1) {
    await writeOut(io.stdout, `${formatTotals(totals, colorsEnabled(io.stdout, io.env))}\n`);
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
