/**
 * chainpress as a pi extension: `pi -e <this file>` or the package's `"pi": {"extensions"}`.
 * Wires pi's events to the small modules of this folder:
 *   session_start / session_tree  → settings loaded, state rebuilt from the branch (state-holder),
 *                                   live-session lock taken for the CLI to respect (live-lock)
 *   context                       → rendered messages (context-handler)
 *   message_end                   → live flush scheduled (live-flush), now or once the cache
 *                                   has expired (flush-timing)
 *   turn_end / agent_end          → persistence gate poked: pi has written the reply by now;
 *                                   turn_end also schedules the open-chain step (open-chain-step)
 *   session_shutdown              → pending flush awaited (bounded), worker pool closed, lock released
 *   /pruner, context_tree_query   → commands, query-tool
 * Every handler is guarded: a failure is reported and pi goes on with the raw context.
 */

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { registerCommands } from "./commands.js";
import { handleContext } from "./context-handler.js";
import { cancelColdFlush } from "./flush-timing.js";
import { handleMessageEnd } from "./live-flush.js";
import { holdLiveLock, releaseLiveLock } from "./live-lock.js";
import { handleTurnEnd } from "./open-chain-step.js";
import { registerQueryTool } from "./query-tool.js";
import { guard, notify } from "./report.js";
import { applySettings, createRuntime, type Chainpress, type ChainpressOptions } from "./runtime.js";
import { loadMsgpack } from "../io/msgpack-codec.js";
import { loadSettings, resolveAgentDir } from "../io/settings-file.js";
import { refreshStatusLine } from "./status.js";

/** How long session_shutdown waits for a running flush before closing the pool anyway. */
const SHUTDOWN_WAIT_MS = 30_000;

export default function chainpress(pi: ExtensionAPI): void {
  createChainpress(pi, { agentDir: resolveAgentDir() });
}

/** The factory with its dependencies explicit (tests pass their own agent dir and runner). */
export function createChainpress(pi: ExtensionAPI, options: ChainpressOptions): Chainpress {
  const runtime = createRuntime(pi, options);
  // The live flush encodes with msgpackr: loaded now, while pi starts, not in the first flush,
  // where its loading would stall pi's UI. A failure is not lost: the
  // flush awaits this same promise and reports it.
  loadMsgpack().catch(() => undefined);
  pi.on("session_start", (_event, ctx) => guard(runtime, ctx, "session start", undefined, () => startSession(runtime, ctx)));
  pi.on("session_tree", (_event, ctx) => guard(runtime, ctx, "tree navigation", undefined, () => reloadBranch(runtime, ctx)));
  pi.on("context", (event, ctx) => handleContext(runtime, event, ctx));
  pi.on("message_end", (event, ctx) => guard(runtime, ctx, "message_end", undefined, () => handleMessageEnd(runtime, event, ctx)));
  pi.on("turn_end", (event, ctx) =>
    guard(runtime, ctx, "turn_end", undefined, () => {
      runtime.gate.poke();
      handleTurnEnd(runtime, event, ctx);
    }),
  );
  pi.on("agent_end", (_event, ctx) => guard(runtime, ctx, "agent_end", undefined, () => runtime.gate.poke()));
  pi.on("session_shutdown", (_event, ctx) => guard(runtime, ctx, "shutdown", undefined, () => shutdown(runtime)));
  registerCommands(runtime);
  registerQueryTool(runtime, pi);
  return runtime;
}

async function startSession(runtime: Chainpress, ctx: ExtensionContext): Promise<void> {
  const merged = loadSettings(runtime.agentDir, ctx.cwd);
  applySettings(runtime, merged);
  for (const warning of merged.warnings) notify(ctx, `pruner: settings: ${warning}`, "warning");
  reloadBranch(runtime, ctx);
  await holdLiveLock(runtime, ctx.sessionManager.getSessionFile());
}

function reloadBranch(runtime: Chainpress, ctx: ExtensionContext): void {
  runtime.holder.reload(ctx.sessionManager);
  refreshStatusLine(runtime, ctx);
}

/** Let a running flush finish (print mode exits right after), then stop the worker threads. */
async function shutdown(runtime: Chainpress): Promise<void> {
  releaseLiveLock(runtime);
  cancelColdFlush(runtime);
  runtime.gate.releaseAll();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
  await Promise.race([runtime.queue.idle(), timeout]);
  clearTimeout(timer);
  await runtime.runner.close();
}
