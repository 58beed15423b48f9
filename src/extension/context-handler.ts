/**
 * The `context` event: pi hands over the messages of the next LLM call (a private clone) and
 * sends whatever we return. Compressed chains become their `<compressed-chain>` message,
 * archived outputs become stubs, protected outputs are relocated and orphans swept
 * (core/render). When nothing applies, the very array pi gave us is returned, so pi and other
 * extensions can tell by identity that chainpress changed nothing.
 */

import type { ContextEvent, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { mapBudgetOf } from "../core/archive-map.js";
import { pruneMessages, type PruneOptions } from "../core/render/prune-messages.js";
import type { AgentMessage } from "../core/session-types.js";
import { locateSpillFile } from "../io/read-spill.js";
import { noteRequest } from "./flush-timing.js";
import { openChainStepSettled } from "./open-chain-step.js";
import { guard } from "./report.js";
import type { Chainpress } from "./runtime.js";
import type { SessionView } from "./session-view.js";
import { blobDirOf } from "./state-holder.js";

/** Rendering options from the settings (shared with the status report's context measure). */
export function pruneOptions(runtime: Chainpress): PruneOptions {
  const { settings } = runtime;
  return {
    isProtected: runtime.isProtected,
    recoveryGraceTurns: settings.recoveryGraceTurns,
    chainCompressionEnabled: settings.chainCompression.enabled,
    stripFinalAssistantThinking: settings.chainCompression.stripFinalAssistantThinking,
    map: mapBudgetOf(settings.archiveMap) ?? false,
  };
}

/** The messages the model should see; `messages` itself when chainpress is off or nothing changed. */
export function renderContext(runtime: Chainpress, messages: AgentMessage[], sessionManager: SessionView): AgentMessage[] {
  const { settings, holder } = runtime;
  if (!settings.enabled) return messages;
  // Stubs name where each spill file is now, so a moved session still points at real files.
  const blobDir = blobDirOf(sessionManager);
  const spillPathOf = (stored: string): string | undefined => locateSpillFile(stored, blobDir);
  const editedOutputs = holder.edits.editedOutputs(sessionManager);
  const result = pruneMessages(messages, holder.state, { ...pruneOptions(runtime), spillPathOf, editedOutputs });
  // Not awaited: the LLM call must not wait for a diagnostic write.
  if (result.diagnostics.length > 0) void holder.report(result.diagnostics);
  return result.messages;
}

export function handleContext(runtime: Chainpress, event: ContextEvent, ctx: ExtensionContext): Promise<{ messages: ContextEvent["messages"] }> {
  // On failure pi keeps the messages unchanged: the model sees the raw context.
  return guard(runtime, ctx, "context rendering", { messages: event.messages }, async () => {
    // The request after a batch that triggered an open-chain step carries that step's stubs.
    await openChainStepSettled(runtime);
    const rendered = renderContext(runtime, event.messages as unknown as AgentMessage[], ctx.sessionManager);
    noteRequest(runtime, rendered, ctx);
    return { messages: rendered as unknown as ContextEvent["messages"] };
  });
}
