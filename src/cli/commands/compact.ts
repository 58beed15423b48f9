/** `chainpress compact <session.jsonl | folder>…`: the command line; the work is in actions/compact.ts. */

import type { Command } from "commander";
import { DEFAULT_SPILL_PREVIEW_BYTES, DEFAULT_SPILL_THRESHOLD } from "../../core/defaults.js";
import { SMALL_SESSION_BYTES } from "../../main/small-session.js";
import { addFollowLinksOption, addProtectionOptions, capWorkers, compactWorkersFor, integerParser, type FollowLinksFlag } from "../options.js";
import type { CliIo } from "../output.js";
import type { ExitState } from "../run-cli.js";

export interface RawCompactOptions extends FollowLinksFlag {
  workers: number;
  dryRun?: boolean;
  out?: string;
  protectedTools?: string[];
  protectedPaths?: string[];
  spillThreshold?: number;
  rollingWindow: number;
  includeCompacted?: boolean;
  /** False with `--no-open-chains`. */
  openChains: boolean;
  json?: boolean;
  force?: boolean;
  repair?: boolean;
}

const EXAMPLES = `
Examples:
  chainpress compact ~/.pi/agent/sessions            every session under the folder, in place
  chainpress compact s.jsonl --dry-run               what would happen; nothing is written
  chainpress compact s.jsonl --out s-compact.jsonl   compacted copy; s.jsonl stays untouched
  chainpress compact s.jsonl --json | jq .totals     machine-readable report

Spill files go to <session folder>/<session id>-blobs/, as pi-condense puts them.
Refuses a session another chainpress holds, or one modified in the last 5 s (pi may be
writing it) unless --force. A damaged session (incomplete last line, malformed line) is
refused unless --repair, which first keeps a byte-exact <session>.bak copy.
A session path that is a symbolic link is refused, even with --force, unless --follow-links:
then the file it names is compacted by its real path (spill folder, lock and .bak beside it).
In a folder, a *.jsonl link is skipped with a note unless --follow-links; linked sub-folders
are not entered. Folders above a session may be links (a sessions folder on another disk).
Exit status: 0 all sessions compacted, 1 some session failed, 2 usage error.`;

export function registerCompact(program: Command, io: CliIo, exit: ExitState): void {
  const command = program
    .command("compact")
    .description("compress the closed tool-call chains of saved sessions, appending to each session in place")
    .argument("<sessions...>", "session files (*.jsonl), or folders searched recursively for them")
    .option("--workers <n>", `worker threads compressing chains (0 = inline; at most the available parallelism; default: one per core, or inline when the session files named are under ${SMALL_SESSION_BYTES / (1024 * 1024)} MiB in all)`, integerParser(0))
    .option("--dry-run", "report what would happen; write nothing")
    .option("--out <file>", "compact a copy written to FILE; the input stays byte-identical");
  addProtectionOptions(command)
    .option("--spill-threshold <chars>", `outputs this long or longer go to spill files (default: ${DEFAULT_SPILL_THRESHOLD}; preview ${DEFAULT_SPILL_PREVIEW_BYTES} bytes)`, integerParser(1))
    .option("--rolling-window <k>", "leave the newest K closed chains uncompressed (the live-flush rule)", integerParser(0), 0)
    .option("--include-compacted", "also compress whole chains hidden behind pi's latest compaction (skipped by default: they save no context)")
    .option("--no-open-chains", "leave a chain still open at the end of a session whole (default: archive its older outputs per the openChains settings)")
    .option("--json", "print only a JSON report on stdout")
    .option("--force", "ignore a recent modification time and overwrite existing --out / .bak files")
    .option("--repair", "drop an incomplete last line or malformed lines, after copying the session to <session>.bak");
  addFollowLinksOption(command)
    .addHelpText("after", EXAMPLES)
    .action(async (sessions: string[], given: Omit<RawCompactOptions, "workers"> & { workers?: number }) => {
      const raw = { ...given, workers: given.workers ?? compactWorkersFor(sessions) };
      // The pool's threads start first and boot while the compression machinery loads; both are
      // imported here, so `--help` and usage errors never load them.
      const workers = capWorkers(raw.workers).workers;
      const pool = workers > 0 ? (await import("../../main/worker-pool.js")).startPool(workers) : undefined;
      try {
        const { runCompact } = await import("../actions/compact.js");
        exit.code = await runCompact(io, sessions, raw, pool);
      } finally {
        await pool?.close();
      }
    });
}

