/**
 * Compacting one session from the command line, with the safety rules around compactSession:
 * lock, quiet-file check, spill-folder check, `--out` copy, and `--repair` of a damaged file.
 * Nothing here compresses anything; it decides whether and where compactSession may write.
 */

import type { ShrinkRender } from "../main/plan-shrink.js";
import fs from "node:fs";
import path from "node:path";
import { acquireSessionLock, LockFileError, type SessionLock } from "../io/session-lock.js";
import type { ChainRunner } from "../main/chain-runner.js";
import type { OpenChainSettings } from "../core/open-chain-policy.js";
import type { CompactOptions } from "../main/compact-options.js";
import type { CompactReport } from "../main/compact-report.js";
import { compactSession } from "../main/compact-session.js";
import type { ChainProgress } from "../main/compress-eligible.js";
import { CliError, describeError } from "./errors.js";
import { assertSessionFile, checkBlobDir, checkQuiet } from "./preflight.js";
import { liveSessionDecision, type LiveDecision, type SessionSource } from "./live-session.js";
import { checkOutTarget, commitOutCopy, CopyPlacedError, discardOutCopy, failedOutCopy, stageOutCopy, sweepOutTemps } from "./out-copy.js";
import { backupSession, dropMalformedLines, isRepairable } from "./repair.js";
import { resolveSessionPath, type SessionPath } from "./session-path.js";
import { sweepSessionLeftovers } from "./sweep.js";

export interface CompactFlags {
  dryRun: boolean;
  out?: string;
  protectedTools?: string[];
  protectedPaths?: string[];
  spillThreshold?: number;
  spillPreviewBytes?: number;
  recoveryGraceTurns?: number;
  /** Archiving older outputs of a chain left open (settings `openChains`, `--no-open-chains`). */
  openChains?: OpenChainSettings;
  /** How the context will be rendered (settings `archiveMap`, `chainCompression`), for the shrink check. */
  render?: ShrinkRender;
  rollingWindow: number;
  /** Also compact chains wholly behind pi's latest compaction (`--include-compacted`). */
  includeCompacted: boolean;
  force: boolean;
  repair: boolean;
  /** A session path that is a symbolic link names its target (`--follow-links`); else it is refused. */
  followLinks: boolean;
}

export interface SessionOutcome {
  /** The session as named on the command line. */
  file: string;
  /** The file that was compacted: `file`, the real path of the file it links to (`--follow-links`), or the `--out` copy. */
  target: string;
  ok: boolean;
  report?: CompactReport;
  /** `.bak` written by `--repair`. */
  backup?: string;
  /** Malformed lines `--repair` removed (1-based, as in the original file). */
  droppedLines?: number[];
  /** Chains whose compression failed (I/O, worker crash); they stay uncompressed. */
  failedChains: number;
  /** Growth of the session file on disk in bytes (appended entries, plus any migration rewrite); absent for a dry run. */
  sessionBytesAdded?: number;
  /** Why the session failed, without the `chainpress: ` prefix. */
  error?: string;
  /** "open in pi (pid N)" when pi has the session open (io/live-session-lock.ts). */
  openInPi?: string;
  /** Set when the session was left alone on purpose (found in a folder while open in pi). */
  skipped?: string;
  /** Temporary files a killed run left behind, removed before compacting. */
  swept?: string[];
}

export function failedChainCount(report: CompactReport): number {
  return report.skipped.chains.filter((s) => s.failed === true).length;
}

export async function compactOne(
  file: string,
  flags: CompactFlags,
  runner: ChainRunner,
  onProgress: (progress: ChainProgress) => void,
  source: SessionSource = "named",
): Promise<SessionOutcome> {
  let target = flags.out ?? file;
  try {
    // First of all: a refused link leaves nothing behind, and a followed one is used by its real path from here on.
    const session = resolveSessionPath(file, flags.followLinks);
    target = flags.out ?? session.file;
    const live = liveDecisionFor(session, { dryRun: flags.dryRun, force: flags.force, writesInPlace: flags.out === undefined }, source);
    if (live.action === "skip") return { file, target, ok: true, failedChains: 0, openInPi: live.note, skipped: `${live.note}; left alone` };
    const input = session.file;
    // A missing file is reported by writeRun in its own words, not as a raw ENOENT here.
    const sizeBefore = flags.dryRun || !fs.existsSync(input) ? undefined : sizeOf(input);
    const { copyDiscarded, ...result } = flags.dryRun ? await dryRun(input, flags, runner, onProgress) : await writeRun(input, target, flags, runner, onProgress);
    const failedChains = failedChainCount(result.report);
    const outcome: SessionOutcome = { file, target, ok: failedChains === 0, ...result, failedChains };
    if (sizeBefore !== undefined && copyDiscarded !== true) outcome.sessionBytesAdded = sizeOf(target) - sizeBefore;
    if (live.note) outcome.openInPi = live.note;
    if (failedChains > 0) outcome.error = `${target}: ${failedChains} chain(s) could not be compressed (see skipped causes)${copyDiscarded ? "; --out wrote no copy" : ""}`;
    return outcome;
  } catch (error) {
    return { file, target, ok: false, failedChains: 0, error: describeError(error) };
  }
}

/** pi's live marker may sit beside the link pi opened the session by, or beside the file: either counts. */
function liveDecisionFor(session: SessionPath, options: Parameters<typeof liveSessionDecision>[1], source: SessionSource): LiveDecision {
  const decision = liveSessionDecision(session.file, options, source);
  if (decision.action === "skip" || decision.note !== undefined || session.named === session.file) return decision;
  return liveSessionDecision(session.named, options, source);
}

interface RunResult {
  report: CompactReport;
  /** Temporary files of a killed run, removed before compacting. */
  swept?: string[];
  backup?: string;
  droppedLines?: number[];
  /** A `--out` run whose compaction failed chains: no copy was put at the target. */
  copyDiscarded?: boolean;
}

/** A dry run takes no lock and writes nothing; it still refuses a file pi may be writing. */
async function dryRun(file: string, flags: CompactFlags, runner: ChainRunner, onProgress: (p: ChainProgress) => void): Promise<RunResult> {
  checkQuiet(file, flags.force);
  try {
    return { report: await compactSession({ file, runner, options: optionsOf(flags), onProgress }) };
  } catch (error) {
    if (isRepairable(error)) throw new CliError(`${error.message} (a real run needs --repair; a dry run cannot repair)`);
    throw error;
  }
}

async function writeRun(file: string, target: string, flags: CompactFlags, runner: ChainRunner, onProgress: (p: ChainProgress) => void): Promise<RunResult> {
  // Before locking, so a wrong path is reported as such rather than as a lock-file error.
  assertSessionFile(file);
  const copying = flags.out !== undefined;
  if (copying) checkOutTarget(file, target, flags.force);
  if (!fs.existsSync(path.dirname(path.resolve(target)))) throw new CliError(`${target}: folder does not exist`);
  // A copy locks its input too, so an in-place compaction of the input cannot run meanwhile.
  const locks: SessionLock[] = [];
  try {
    const inputLock = copying ? lockInputOfCopy(file) : undefined;
    if (inputLock) locks.push(inputLock);
    locks.push(lockOrExplain(target));
    checkQuiet(file, flags.force);
    if (copying) return await copyRun(file, target, flags, runner, onProgress);
    checkBlobDir(target);
    const swept = sweepSessionLeftovers(target);
    const result = await compactWithRepair(target, flags, runner, onProgress);
    return swept.length > 0 ? { ...result, swept } : result;
  } finally {
    for (const lock of locks.reverse()) lock.release();
  }
}

/**
 * `--out`: the copy is made and compacted under a temporary name, and put at the target only when
 * every chain succeeded; a failure of any kind leaves no file at the target and no temporary file.
 */
async function copyRun(file: string, target: string, flags: CompactFlags, runner: ChainRunner, onProgress: (p: ChainProgress) => void): Promise<RunResult> {
  const swept = [...sweepOutTemps(target), ...sweepSessionLeftovers(target, file)];
  const staged = await stageOutCopy(file, target);
  let result: RunResult;
  try {
    checkBlobDir(staged.path);
    // No .bak with --out: the input, untouched, is the original.
    result = await compactWithRepair(staged.path, { ...flags, repairBackup: false }, runner, onProgress);
    result.report.file = target;
    if (failedChainCount(result.report) > 0) {
      discardOutCopy(staged);
      return { ...result, copyDiscarded: true };
    }
    commitOutCopy(staged, file, flags.force);
  } catch (error) {
    if (error instanceof CopyPlacedError) throw error;
    discardOutCopy(staged);
    throw failedOutCopy(staged, error);
  }
  return swept.length > 0 ? { ...result, swept } : result;
}

/**
 * The input's lock for a `--out` run. An input in a folder nobody can write to needs none: no
 * in-place compaction could write there either.
 */
function lockInputOfCopy(file: string): SessionLock | undefined {
  try {
    return acquireSessionLock(file);
  } catch (error) {
    if (error instanceof LockFileError && (error.code === "EROFS" || error.code === "EACCES" || error.code === "EPERM")) return undefined;
    throw error;
  }
}

async function compactWithRepair(target: string, flags: CompactFlags & { repairBackup?: boolean }, runner: ChainRunner, onProgress: (p: ChainProgress) => void): Promise<RunResult> {
  // With --repair, glued entries are split before anything is appended: our entries then hang
  // under the last of them, and pi sees them all.
  const options = { ...optionsOf(flags), refuseJoinedLines: flags.repair };
  try {
    return { report: await compactSession({ file: target, runner, options, onProgress }) };
  } catch (error) {
    if (!isRepairable(error)) throw error;
    if (!flags.repair) throw new CliError(`${error.message} (rerun with --repair to ${flags.repairBackup === false ? "drop it" : "keep a .bak copy and drop it"})`);
  }
  // compactSession refuses these before writing anything, so the backup is the untouched original.
  const backup = flags.repairBackup === false ? undefined : await backupSession(target, flags.force);
  const droppedLines = await dropMalformedLines(target);
  const report = await compactSession({ file: target, runner, options: { ...options, dropTruncatedTail: true, refuseJoinedLines: false }, onProgress });
  return backup === undefined ? { report, droppedLines } : { report, backup, droppedLines };
}

function optionsOf(flags: CompactFlags): Partial<CompactOptions> {
  const options: Partial<CompactOptions> = { rollingWindow: flags.rollingWindow, dryRun: flags.dryRun, includeCompacted: flags.includeCompacted };
  if (flags.protectedTools) options.protectedTools = flags.protectedTools;
  if (flags.protectedPaths) options.protectedPaths = flags.protectedPaths;
  if (flags.spillThreshold !== undefined) options.spillThreshold = flags.spillThreshold;
  if (flags.spillPreviewBytes !== undefined) options.spillPreviewBytes = flags.spillPreviewBytes;
  if (flags.openChains) options.openChains = flags.openChains;
  if (flags.render) options.render = flags.render;
  if (flags.recoveryGraceTurns !== undefined) options.recoveryGraceTurns = flags.recoveryGraceTurns;
  return options;
}

function sizeOf(file: string): number {
  return fs.statSync(file).size;
}

/** The session lock; a folder that cannot be written is one sentence naming it, not a raw EROFS on the lock file. */
function lockOrExplain(target: string): SessionLock {
  try {
    return acquireSessionLock(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EROFS" || code === "EACCES" || code === "EPERM") {
      const folder = path.dirname(path.resolve(target));
      const why = code === "EROFS" ? "is on a read-only file system" : "is not writable";
      throw new CliError(`${target}: cannot compact: the folder ${folder} ${why}, and chainpress writes its lock, the spill files and the session there`);
    }
    throw error;
  }
}
