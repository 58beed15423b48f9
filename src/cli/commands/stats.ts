/** `chainpress stats <session>`: the command line; the work is in actions/stats.ts. */

import type { Command } from "commander";
import { addFollowLinksOption, addProtectionOptions, FOLLOW_LINKS_READ_HELP, type FollowLinksFlag, type ProtectionFlags } from "../options.js";
import type { CliIo } from "../output.js";
import type { ExitState } from "../run-cli.js";

export function registerStats(program: Command, io: CliIo, exit: ExitState): void {
  const command = program
    .command("stats")
    .description("show chains (closed/interrupted/open), coverage, compression and context size before/after")
    .argument("<session>", "session file (*.jsonl)")
    .option("--json", "print the statistics as JSON");
  addFollowLinksOption(addProtectionOptions(command))
    .addHelpText("after", "\n\"before\" is the context without any compression; \"after\" is rendered with the session's\ncurrent compression. Tokens are estimated as characters / 4, as upstream does; an image counts as\nbilled, by its pixel size where its PNG, JPEG, GIF or WebP header gives it (width x height / 750,\nlong edge scaled to 1568 px, at most 1600 tokens), else as pi estimates it (1,200 tokens)." + FOLLOW_LINKS_READ_HELP)
    .action(async (session: string, options: ProtectionFlags & FollowLinksFlag & { json?: boolean }) => {
      const { runStats } = await import("../actions/stats.js");
      exit.code = await runStats(io, session, options);
    });
}
