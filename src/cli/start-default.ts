/**
 * `npm start`, the README's main job: compact the bundled large session. The session is copied
 * to a fresh temporary folder first (the bundled fixture is never modified, so the job can be
 * rerun), and the copy's modification time is set back so the "pi may be writing it" guard
 * does not refuse a file we just created. CHAINPRESS_DEFAULT_SESSION overrides the source.
 * The temporary folder is removed afterwards (nothing is left in /tmp), unless
 * CHAINPRESS_KEEP_COPY=1 keeps it, and then the last line says where it is.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { lowerOtherThreadsPriority } from "../io/thread-priority.js";
import { watchBrokenPipe } from "./output.js";
import { QUIET_MS } from "./preflight.js";
import { runCli } from "./run-cli.js";
import { raiseTierUpBudget } from "./tier-up-budget.js";

/** Repository root: this file is dist/src/bin/start-default.cjs (bundled), dist/src/cli/start-default.js or src/cli/start-default.ts. */
function repoRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, "..", "..", "..") : path.resolve(here, "..", "..");
}

export function defaultSessionPath(): string {
  return process.env.CHAINPRESS_DEFAULT_SESSION ?? path.join(repoRoot(), "fixtures", "large-sessions", "default-session.jsonl");
}

async function main(): Promise<number> {
  const source = defaultSessionPath();
  if (!fs.existsSync(source)) {
    process.stderr.write(`chainpress: ${source}: bundled session not found\n`);
    return 1;
  }
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-start-"));
  const copy = path.join(folder, path.basename(source));
  fs.copyFileSync(source, copy);
  // A read-only fixture stays read-only in the copy; compact must be able to append to it.
  fs.chmodSync(copy, fs.statSync(copy).mode | 0o200);
  const quietSince = new Date(Date.now() - 2 * QUIET_MS);
  fs.utimesSync(copy, quietSince, quietSince);
  process.stderr.write(`chainpress: compacting a copy of ${source} in ${folder}\n`);
  try {
    return await runCli(["compact", copy, ...process.argv.slice(2)]);
  } finally {
    if (process.env.CHAINPRESS_KEEP_COPY === "1") process.stderr.write(`chainpress: kept the compacted copy and its spill files in ${folder}\n`);
    else {
      fs.rmSync(folder, { recursive: true, force: true });
      process.stderr.write(`chainpress: removed the temporary copy (CHAINPRESS_KEEP_COPY=1 keeps it)\n`);
    }
  }
}

// chainpress's own process, as the executable's (src/cli/main.ts).
raiseTierUpBudget();
lowerOtherThreadsPriority();
watchBrokenPipe(process.stdout);
void main().then((code) => {
  process.exitCode = code;
});
