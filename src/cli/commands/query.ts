/** `chainpress query <session> <ref…>`: the command line; the work is in actions/query.ts. */

import type { Command } from "commander";
import type { CliIo } from "../output.js";
import type { ExitState } from "../run-cli.js";

const HELP_AFTER = `
A ref is a short ref (t12), a tool-call id (every occurrence of it), or id@resultTimestamp.
Without --raw the output is exactly what context_tree_query returns (bodies truncated to
2000 lines / 50 KiB). With --raw only the full original outputs are printed, as their exact
UTF-8 bytes; several outputs are separated by one NUL byte. --raw prints nothing if any
ref fails.`;

export function registerQuery(program: Command, io: CliIo, exit: ExitState): void {
  program
    .command("query")
    .description("print archived original tool outputs, verifying spill files")
    .argument("<session>", "session file (*.jsonl)")
    .argument("<refs...>", "tN short refs, tool-call ids, or id@resultTimestamp")
    .option("--raw", "print only the exact original output bytes (NUL-separated when several)")
    .addHelpText("after", HELP_AFTER)
    .action(async (session: string, refs: string[], options: { raw?: boolean }) => {
      const { runQuery } = await import("../actions/query.js");
      exit.code = await runQuery(io, session, refs, options.raw === true);
    });
}
