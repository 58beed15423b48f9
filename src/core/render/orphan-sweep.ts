/**
 * Render phase 4 (reference §6.4): remove tool results that no immediately preceding assistant
 * turn opened. Providers reject a toolResult without its toolCall, so whatever earlier phases
 * (or a damaged branch) left behind must not reach the model. Pure and linear; the input array
 * is returned when nothing was swept.
 */

import { createHash } from "node:crypto";
import { toolCallParts } from "../message-text.js";
import type { DiagnosticReport } from "../prune-types.js";
import type { AgentMessage, ToolResultMessage } from "../session-types.js";
import { runSteps, stepDue, type Steps } from "../steps.js";

export interface OrphanSweepResult {
  /** The messages without orphans; the input array itself when none was found. */
  messages: AgentMessage[];
  /** One `orphan-sweep` report when anything was swept, else empty. */
  diagnostics: DiagnosticReport[];
}

/** Ids listed in the diagnostic detail before it switches to "+N more". */
const LISTED_IDS = 5;

/**
 * An assistant turn opens its call ids (replacing what was open); a result closes its id once;
 * any other message is a barrier that closes everything, because pi sends results right after
 * the turn that asked for them.
 */
export function sweepOrphans(messages: AgentMessage[]): OrphanSweepResult {
  return runSteps(sweepOrphansSteps(messages));
}

/** sweepOrphans, pausable (core/steps.ts). */
export function* sweepOrphansSteps(messages: AgentMessage[]): Steps<OrphanSweepResult> {
  let open = new Set<string>();
  const swept: string[] = [];
  // Made at the first orphan only: a session without any (nearly all) is returned as it is, and
  // a copy of every message would be garbage of the old generation.
  let kept: AgentMessage[] | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (stepDue(index)) yield;
    if (message.role === "toolResult") {
      const id = (message as ToolResultMessage).toolCallId;
      if (open.delete(id)) kept?.push(message);
      else {
        kept ??= messages.slice(0, index);
        swept.push(String(id));
      }
      continue;
    }
    if (message.role === "assistant") open = new Set(toolCallParts(message).map((call) => call.id));
    else open.clear();
    kept?.push(message);
  }
  if (kept === undefined) return { messages, diagnostics: [] };
  return { messages: kept, diagnostics: [orphanReport(swept)] };
}

/** Dedup key: first 16 hex of SHA-1 over the sorted ids joined by ",", so the same set reports once. */
export function orphanReport(sweptIds: readonly string[]): DiagnosticReport {
  const sorted = [...sweptIds].sort();
  const dedupKey = createHash("sha1").update(sorted.join(","), "utf8").digest("hex").slice(0, 16);
  const rest = sorted.length - LISTED_IDS;
  const more = rest > 0 ? ` ... +${rest} more` : "";
  const detail = `swept ${sorted.length} orphan toolResult(s): ${sorted.slice(0, LISTED_IDS).join(", ")}${more}`;
  return { kind: "orphan-sweep", detail, dedupKey };
}
