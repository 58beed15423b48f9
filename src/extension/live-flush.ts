/**
 * The live flush: when the agent ends a chain with a text-only reply, compress the closed chains
 * older than the rolling window, when the trigger says it is worth its cache rewrite
 * (flush-timing.ts; else once the cache has expired). Unlike upstream, every flush opportunity runs the pass even when
 * nothing new crossed the window, so a chain stranded by an earlier failure is healed at the
 * next reply instead of waiting for `/pruner compact`.
 *
 * Hooks and ordering (why it looks like this):
 *   message_end(text-only assistant)  → schedule a flush; the handler returns at once. Awaiting
 *     the flush there would hold pi's event queue, and with it pi's own persistence and UI.
 *   the flush                          → detects on the branch PLUS the closing message
 *     (not persisted yet) and starts the worker pool right away,
 *   its appends                        → wait on the PersistGate until pi has written the closing
 *     message (turn_end / agent_end poke it), so every chain entry follows the message it refers
 *     to in the session file (see persist-gate.ts for what goes wrong otherwise),
 *   and                                → are refused if the branch changed meanwhile (generation).
 * Flushes run one at a time on the runtime's SerialQueue, shared with `/pruner compact`.
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { toolCallParts } from "../core/message-text.js";
import type { AgentMessage } from "../core/session-types.js";
import type { AppendEntry } from "../main/append-entry.js";
import { eligibleChains, failedSkips, passInput, runPass } from "./compress-pass.js";
import { flushDue, scheduleColdFlush } from "./flush-timing.js";
import { guard, notify } from "./report.js";
import { branchBoundAppend, type Chainpress } from "./runtime.js";
import { refreshStatusLine } from "./status.js";

/** What `/pruner` commands report while a flush holds the queue. */
export const FLUSH_LABEL = "a chain compression";

/** A reply without tool calls closes the chain it answers (the detector's rule). */
export function closesChain(message: AgentMessage): boolean {
  return message.role === "assistant" && toolCallParts(message).length === 0;
}

/**
 * A reply that failed (a context overflow, the output limit): pi 1.6's recovery may omit it with a
 * context edit and answer again, so it triggers no flush; the reply pi keeps does.
 */
function mayBeOmitted(message: AgentMessage): boolean {
  const stopReason = (message as { stopReason?: unknown }).stopReason;
  return stopReason === "error" || stopReason === "length";
}

export function handleMessageEnd(runtime: Chainpress, event: { message: unknown }, ctx: ExtensionContext): void {
  const message = event.message as unknown as AgentMessage;
  if (!closesChain(message) || mayBeOmitted(message)) return;
  // Deliberately not awaited (see the header); failures are reported inside.
  void requestFlush(runtime, message, ctx);
}

/** Queue a flush (merged with one still waiting to start); resolves when it has run. */
export function requestFlush(runtime: Chainpress, closing: AgentMessage | undefined, ctx: ExtensionContext): Promise<void> {
  return runtime.queue.coalesce(() => guard(runtime, ctx, "chain compression", undefined, () => flushOnce(runtime, closing, ctx)), FLUSH_LABEL);
}

async function flushOnce(runtime: Chainpress, closing: AgentMessage | undefined, ctx: ExtensionContext): Promise<void> {
  const { settings } = runtime;
  if (!settings.enabled || !settings.chainCompression.enabled) return;
  // Taken before reading the branch: a rebuild during the pass must stop its appends.
  const generation = runtime.holder.generation;
  const input = await passInput(runtime, ctx.sessionManager, closing);
  const window = settings.chainCompression.rollingWindow;
  const eligible = eligibleChains(runtime, input, window);
  if (generation !== runtime.holder.generation || eligible.length === 0) return;
  const due = flushDue(runtime, input.messages, eligible);
  if (!due.run) {
    // Deferred while the cache is warm: decided again once it has expired (never re-armed by a cold decision).
    if (!due.cacheCold) scheduleColdFlush(runtime, () => requestFlush(runtime, undefined, ctx));
    return;
  }
  const append = gatedAppend(runtime, ctx, closing, generation);
  const result = await runPass(runtime, ctx.sessionManager, input, window, append);
  const ids = result.compressedEntries.map((entry) => entry.blockId);
  if (ids.length > 0) notify(ctx, `pruner: compressed ${ids.length} chain${ids.length === 1 ? "" : "s"} (${ids.join(", ")})`);
  for (const cause of failedSkips(result)) {
    // A persistent failure (say, a broken pool) would otherwise warn at every single reply.
    if (runtime.holder.errors.includes(cause)) continue;
    runtime.holder.recordError(cause);
    notify(ctx, `pruner: chain left uncompressed, retried at the next reply: ${cause}`, "warning");
  }
  for (const skip of result.skipped) {
    // Refused for good (its own data rules it out): said once, and recorded as a diagnostic.
    if (!skip.permanent || runtime.holder.refusedNotified.has(skip.startUserTimestamp)) continue;
    runtime.holder.refusedNotified.add(skip.startUserTimestamp);
    notify(ctx, `pruner: chain left uncompressed for good: ${skip.cause ?? "refused"}`, "warning");
  }
  refreshStatusLine(runtime, ctx);
}

/** Appends that wait for the closing message to be persisted and stop if the branch changed. */
function gatedAppend(runtime: Chainpress, ctx: ExtensionContext, closing: AgentMessage | undefined, generation: number): AppendEntry {
  const append = branchBoundAppend(runtime, generation);
  // Asked once: our own appends then move the leaf away from the closing message.
  let persisted: Promise<boolean> | undefined;
  return async (customType, data) => {
    persisted ??= runtime.gate.persisted(closing, ctx.sessionManager);
    if (!(await persisted)) throw new Error(`pi did not persist the closing reply within ${runtime.gate.timeout / 1000} s`);
    await append(customType, data);
  };
}
