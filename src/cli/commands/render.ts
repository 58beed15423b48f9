/** `chainpress render <session>`: the command line; the work is in actions/render.ts. */

import type { Command } from "commander";
import { addFollowLinksOption, addProtectionOptions, FOLLOW_LINKS_READ_HELP, type FollowLinksFlag, type ProtectionFlags } from "../options.js";
import type { CliIo } from "../output.js";
import type { ExitState } from "../run-cli.js";

export function registerRender(program: Command, io: CliIo, exit: ExitState): void {
  const command = program
    .command("render")
    .description("print the messages the model would see (after compression) as JSONL, or as a transcript")
    .argument("<session>", "session file (*.jsonl)")
    .option("--text", "a readable transcript instead of JSONL");
  addFollowLinksOption(addProtectionOptions(command))
    .addHelpText("after", "\nOne JSON message per line on stdout; warnings (skipped malformed lines) go to stderr." + FOLLOW_LINKS_READ_HELP)
    .action(async (session: string, options: ProtectionFlags & FollowLinksFlag & { text?: boolean }) => {
      const { runRender } = await import("../actions/render.js");
      exit.code = await runRender(io, session, options);
    });
}
