/**
 * The chainpress command line: commander program, one module per subcommand, and the mapping
 * of every way out to an exit status (0 ok, 1 some session failed, 2 usage error). commander's
 * own usage errors are caught through exitOverride so they exit 2 as well, and nothing calls
 * process.exit: the caller sets the exit code once stdout has been written.
 */

import { Command, CommanderError } from "commander";
import { registerCompact } from "./commands/compact.js";
import { registerCost } from "./commands/cost.js";
import { registerQuery } from "./commands/query.js";
import { registerRender } from "./commands/render.js";
import { registerStats } from "./commands/stats.js";
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, formatError } from "./errors.js";
import { processIo, type CliIo } from "./output.js";

/** Set by a command's action: its exit status. */
export interface ExitState {
  code: number;
}

const VERSION = "0.1.0";

export function buildProgram(io: CliIo, exit: ExitState): Command {
  const program = new Command("chainpress")
    .description("Compress closed tool-call chains in pi coding-agent sessions (pi-condense compatible).")
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`chainpress: ${text.replace(/^error: /, "")}`),
    });
  // Subcommands created with .command() inherit exitOverride and the output settings.
  registerCompact(program, io, exit);
  registerRender(program, io, exit);
  registerQuery(program, io, exit);
  registerStats(program, io, exit);
  registerCost(program, io, exit);
  return program;
}

/** Runs one command line (`argv` without node and script) and returns the exit status. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const exit: ExitState = { code: EXIT_OK };
  const program = buildProgram(io, exit);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exit.code;
  } catch (error) {
    return exitCodeFor(error, io);
  }
}

function exitCodeFor(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // --help and --version end through exitOverride too; commander already printed its message.
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT_OK;
    if (error.code === "commander.help" || error.code === "commander.executeSubCommandAsync") return EXIT_USAGE;
    return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  io.stderr.write(`${formatError(error, io.env)}\n`);
  return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILED;
}
