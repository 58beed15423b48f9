/**
 * `/pruner compact | status | on | off`.
 *   compact  every eligible chain now (rolling window 0), even when chainpress is off: it is an
 *            explicit request. Waits until pi is idle, so the newest reply is persisted and its
 *            chain counts as closed; then queues behind any running flush. Both waits are
 *            bounded: a command that cannot start within seconds says why and does nothing.
 *   status   counts, archive, context saved, diagnostics, errors.
 *   on|off   persisted as `chainpress.enabled` in pi's settings.json. Off = no live flush and no
 *            rendering: the model sees the raw session again (archived entries stay in the file).
 */

import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { imageBillOf } from "../core/billed-size.js";
import { CHARS_PER_TOKEN, COMPACT_ROLLING_WINDOW } from "../core/defaults.js";
import type { AgentMessage, ToolResultMessage } from "../core/session-types.js";
import type { CompressEligibleResult } from "../main/compress-eligible.js";
import { startLoadMonitor } from "../main/load-monitor.js";
import { passInput, runPass, sessionLines } from "./compress-pass.js";
import { guard, notify } from "./report.js";
import { branchBoundAppend, type Chainpress } from "./runtime.js";
import { persistEnabled } from "../io/settings-file.js";
import type { Busy } from "./serial-queue.js";
import { refreshStatusLine, statusReport } from "./status.js";

const SUBCOMMANDS = ["compact", "status", "on", "off"] as const;
const USAGE = `usage: /pruner ${SUBCOMMANDS.join(" | ")}`;

export function registerCommands(runtime: Chainpress): void {
  runtime.pi.registerCommand("pruner", {
    description: "chainpress: compact closed tool-call chains now, show status, turn on/off",
    getArgumentCompletions: (prefix) => SUBCOMMANDS.filter((name) => name.startsWith(prefix.trim())).map((name) => ({ value: name, label: name })),
    handler: (args, ctx) => guard(runtime, ctx, `/pruner ${args.trim()}`, undefined, () => runSubcommand(runtime, args.trim(), ctx)),
  });
}

async function runSubcommand(runtime: Chainpress, name: string, ctx: ExtensionCommandContext): Promise<void> {
  if (name === "compact") return compact(runtime, ctx);
  if (name === "status" || name === "") return showStatus(runtime, ctx);
  if (name === "on" || name === "off") return setEnabled(runtime, ctx, name === "on");
  notify(ctx, `pruner: unknown subcommand "${name}"; ${USAGE}`, "warning");
}

async function compact(runtime: Chainpress, ctx: ExtensionCommandContext): Promise<void> {
  // Waiting for idle lets the newest reply be persisted so its chain counts as closed; bounded,
  // so a long agent run gets an answer instead of a silent command.
  if (!(await idleWithin(ctx, runtime.commandWaitMs))) {
    notify(ctx, "pruner: compact not run: pi is still busy with the agent's run; try again when it ends", "warning");
    return;
  }
  const outcome = await runtime.queue.tryRun(
    async () => {
      const generation = runtime.holder.generation;
      // Measured on pi's own event loop while it runs: what `/pruner status` reports.
      const started = performance.now();
      const monitor = startLoadMonitor();
      let chains = 0;
      let chainsFromFile = 0;
      let result: CompressEligibleResult;
      let messages: readonly AgentMessage[] = [];
      try {
        const input = await passInput(runtime, ctx.sessionManager);
        messages = input.messages;
        const lines = await sessionLines(runtime, ctx.sessionManager, input, COMPACT_ROLLING_WINDOW);
        result = await runPass(runtime, ctx.sessionManager, input, COMPACT_ROLLING_WINDOW, branchBoundAppend(runtime, generation), lines);
        chains = result.compressedEntries.length;
        chainsFromFile = result.stats.chainsFromFile;
      } finally {
        runtime.lastCompact = { ...monitor.stop(), wallMs: performance.now() - started, chains, chainsFromFile };
      }
      notify(ctx, compactNotice(result, droppedImageTokens(result, messages)));
      refreshStatusLine(runtime, ctx);
    },
    COMPACT_LABEL,
    runtime.commandWaitMs,
  );
  if (!outcome.ran) notify(ctx, `pruner: compact not run: ${busyText(runtime, outcome.busy)}; try again when it finishes`, "warning");
}

const COMPACT_LABEL = "/pruner compact";

/** ctx.waitForIdle, or false once `ms` have passed. */
async function idleWithin(ctx: ExtensionCommandContext, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([ctx.waitForIdle().then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** "a chain compression has been running for 12 s, waiting for pi to persist the closing reply". */
export function busyText(runtime: Chainpress, busy: Busy | undefined, now = Date.now()): string {
  if (!busy) return "another pruner task holds the queue";
  const seconds = Math.round((now - busy.since) / 1000);
  const waiting = runtime.gate.waitingSince();
  const why = waiting === undefined ? "" : `, waiting for pi to persist the closing reply (gives up after ${runtime.gate.timeout / 1000} s)`;
  return `${busy.label} has been running for ${seconds} s${why}`;
}

/**
 * Tokens of the image parts of the outputs the compressed chains dropped from the context, as
 * billed (core/billed-size.ts): archivedChars counts their text only.
 */
export function droppedImageTokens(result: CompressEligibleResult, messages: readonly AgentMessage[]): number {
  const dropped = new Set(result.compressedEntries.flatMap((entry) => entry.droppedToolCallIds));
  let tokens = 0;
  for (const message of messages) {
    if (message.role === "toolResult" && dropped.has((message as ToolResultMessage).toolCallId)) tokens += imageBillOf(message).tally.tokens;
  }
  return tokens;
}

/**
 * Upstream's notice texts (reference §9.4). "Reclaimed" = archived output minus the bodies that
 * replace it, plus the dropped outputs' images as billed; unlike upstream it counts spilled
 * outputs too, and it needs no re-render of the
 * whole context (which would stall pi's UI on a large session).
 */
export function compactNotice(result: CompressEligibleResult, imageTokens = 0): string {
  const ids = result.compressedEntries.map((entry) => entry.blockId);
  if (ids.length > 0) {
    const bodies = result.compressedEntries.reduce((sum, entry) => sum + (entry.rangeSummaryText?.length ?? 0), 0);
    const tokens = Math.ceil(Math.max(0, result.stats.archivedChars - bodies) / CHARS_PER_TOKEN) + imageTokens;
    return `pruner: compacted ${ids.length} chain${ids.length === 1 ? "" : "s"} (${ids.join(", ")}), reclaimed ~${tokens} tokens`;
  }
  // Every chain something kept from being compressed; an already compressed one is no news.
  const skipped = result.skipped.filter((skip) => skip.reason !== "already-compressed");
  if (skipped.length === 0) return "pruner: no chains eligible for compaction";
  const causes = [...new Set(skipped.map((skip) => skip.cause ?? skip.reason))].join("; ");
  return `pruner: no chains eligible for compaction (${skipped.length} skipped \u2014 ${causes})`;
}

async function showStatus(runtime: Chainpress, ctx: ExtensionCommandContext): Promise<void> {
  // Behind the queue, briefly: a status asked right after a reply reports that reply's flush. The
  // report only reads, so when the queue stays busy it is shown anyway, saying what runs.
  const outcome = await runtime.queue.tryRun(async () => notify(ctx, await statusReport(runtime, ctx.sessionManager)), "/pruner status", runtime.commandWaitMs);
  if (!outcome.ran) notify(ctx, `${await statusReport(runtime, ctx.sessionManager)}\nbusy: ${busyText(runtime, outcome.busy)}`);
}

async function setEnabled(runtime: Chainpress, ctx: ExtensionCommandContext, enabled: boolean): Promise<void> {
  const file = await persistEnabled(runtime.agentDir, enabled);
  runtime.settings = { ...runtime.settings, enabled };
  refreshStatusLine(runtime, ctx);
  notify(ctx, `pruner: ${enabled ? "on" : "off"} (saved in ${file})`);
}
