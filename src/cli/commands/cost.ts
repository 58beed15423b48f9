/** `chainpress cost <session | folder>…`: the command line; the work is in actions/cost.ts. */

import { InvalidArgumentError, Option, type Command } from "commander";
import { DEFAULT_ROLLING_WINDOW, DEFAULT_SPILL_THRESHOLD } from "../../core/defaults.js";
import { FLUSH_TRIGGERS, type FlushTriggerName } from "../../core/flush-trigger.js";
import { DEFAULT_CHAIN_COMPRESSION } from "../../core/settings.js";
import { CACHE_TTL_1H_MS, CACHE_TTL_5M_MS } from "../../core/replay/cache-model.js";
import { addFollowLinksOption, addProtectionOptions, integerParser, type FollowLinksFlag, type ProtectionFlags } from "../options.js";
import type { CliIo } from "../output.js";
import type { ExitState } from "../run-cli.js";

export interface RawCostOptions extends FollowLinksFlag, ProtectionFlags {
  cacheTtl: number;
  json?: boolean;
  chart?: string;
  spillThreshold?: number;
  rollingWindow?: number;
  trigger?: FlushTriggerName;
  paybackRequests?: number;
  /** False with `--no-open-chains`. */
  openChains: boolean;
}

/** The cache lifetimes the providers offer. */
function cacheTtlParser(value: string): number {
  if (value === "5m") return CACHE_TTL_5M_MS;
  if (value === "1h") return CACHE_TTL_1H_MS;
  throw new InvalidArgumentError(`expected 5m or 1h, got "${value}"`);
}

function triggerParser(value: string): FlushTriggerName {
  const found = FLUSH_TRIGGERS.find((name) => name === value);
  if (found === undefined) throw new InvalidArgumentError(`expected one of ${FLUSH_TRIGGERS.join(", ")}, got "${value}"`);
  return found;
}

const EXAMPLES = `
Examples:
  chainpress cost s.jsonl                          the bill as run, replayed, and with chainpress
  chainpress cost ~/.pi/agent/sessions --json      every session under the folder, and totals
  chainpress cost s.jsonl --chart s-cost.svg       prompt tokens and cumulative bill per request
  chainpress cost s.jsonl --cache-ttl 1h           as if the prompt cache lived an hour
  chainpress cost s.jsonl --trigger each-reply     compress at every reply, as upstream does

Read-only: no session is written. Prices come from each session's recorded cost (a built-in
table only for what it never billed); the report says which. A session without recorded usage
is replayed on estimated tokens (characters / 4). The as-run replay runs the recording through
the replay's token counts and cache model; its error against the recorded bill checks the model.
The chainpress figures come from the replay engine's chainpress-live policy, with the settings
below over the settings files'; the policy's cache lifetime is --cache-ttl's.
Folders are walked as compact walks them: a *.jsonl link found in a folder is skipped with a note
unless --follow-links. --chart takes one session; it is written atomically and never through a link.
Exit status: 0 all sessions replayed, 1 some session failed, 2 usage error.`;

export function registerCost(program: Command, io: CliIo, exit: ExitState): void {
  const command = program
    .command("cost")
    .description("replay saved sessions' bills: as run, and with chainpress compressing them (prompt cache included)")
    .argument("<sessions...>", "session files (*.jsonl), or folders searched recursively for them")
    .option("--json", "print only a JSON report on stdout")
    .option("--chart <file.svg>", "write an SVG chart of one session: prompt tokens and cumulative bill per request, as run and with chainpress")
    .addOption(new Option("--cache-ttl <5m|1h>", "the prompt cache's lifetime").argParser(cacheTtlParser).default(CACHE_TTL_5M_MS, "5m"));
  addProtectionOptions(command)
    .option("--spill-threshold <chars>", `the chainpress policy's spill threshold (default: ${DEFAULT_SPILL_THRESHOLD})`, integerParser(1))
    .option("--rolling-window <k>", `the chainpress policy leaves the newest K closed chains uncompressed (default: the settings', ${DEFAULT_ROLLING_WINDOW})`, integerParser(0))
    .option("--trigger <name>", `when the policy compresses: ${FLUSH_TRIGGERS.join(", ")} (default: the settings', ${DEFAULT_CHAIN_COMPRESSION.trigger})`, triggerParser)
    .option("--payback-requests <n>", `when-it-pays: the saved reads over N later requests must exceed the rewrite (default: the settings', ${DEFAULT_CHAIN_COMPRESSION.paybackRequests})`, integerParser(0))
    .option("--no-open-chains", "the chainpress policy leaves open chains whole");
  addFollowLinksOption(command)
    .addHelpText("after", EXAMPLES)
    .action(async (sessions: string[], raw: RawCostOptions) => {
      const { runCost } = await import("../actions/cost.js");
      exit.code = await runCost(io, sessions, raw);
    });
}
