/**
 * What `/pruner status` and the footer status line say. The status line is cheap (counters only)
 * because it is refreshed after every flush; the full report measures the rendered context and
 * is computed only on request.
 */

import fs from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { CHARS_PER_TOKEN } from "../core/defaults.js";
import { detectChains } from "../core/detect-chains.js";
import type { DiagnosticKind } from "../core/prune-types.js";
import { formatReconstructWarning } from "../core/reconstruct.js";
import { pruneMessages } from "../core/render/prune-messages.js";
import type { AgentMessage } from "../core/session-types.js";
import { contextMessages } from "../core/session-tree.js";
import { pruneOptions } from "./context-handler.js";
import type { Chainpress } from "./runtime.js";
import type { SessionView } from "./session-view.js";
import { branchEntries, blobDirOf, sessionBranchMessages } from "./state-holder.js";

/** Key of our segment in pi's footer. */
export const STATUS_KEY = "chainpress";

/** Diagnostic counters as upstream's status line abbreviates them (reference §9.5). */
const DIAG_LETTERS: Array<[DiagnosticKind, string]> = [
  ["unresolved-range", "u"],
  ["range-id-mismatch", "m"],
  ["orphan-sweep", "o"],
  ["backfill-empty", "b"],
  ["backfill-skipped", "s"],
];

interface ArchiveTotals {
  records: number;
  spilled: number;
  spilledBytes: number;
}

function archiveTotals(runtime: Chainpress): ArchiveTotals {
  const totals: ArchiveTotals = { records: 0, spilled: 0, spilledBytes: 0 };
  for (const record of runtime.holder.state.records.values()) {
    totals.records++;
    if (record.spillPath) {
      totals.spilled++;
      totals.spilledBytes += record.spillBytes ?? 0;
    }
  }
  return totals;
}

/** ` · diag u1/o2`, plus ` · 3 diag unsaved` when appends failed; "" when all is quiet. */
function diagnosticsSegment(runtime: Chainpress): string {
  const { counters, failures } = runtime.holder.diagnostics;
  const parts = DIAG_LETTERS.filter(([kind]) => counters[kind] > 0).map(([kind, letter]) => `${letter}${counters[kind]}`);
  const written = parts.length === 0 ? "" : ` \u00b7 diag ${parts.join("/")}`;
  return failures.length === 0 ? written : `${written} \u00b7 ${failures.length} diag unsaved`;
}

export function statusLine(runtime: Chainpress): string {
  if (!runtime.settings.enabled) return "\u2502 chainpress off";
  const totals = archiveTotals(runtime);
  const compressed = runtime.holder.state.chains.size;
  return `\u2502 chainpress \u00b7 ${compressed} chain${compressed === 1 ? "" : "s"} compressed \u00b7 ${totals.records} archived${diagnosticsSegment(runtime)}`;
}

export function refreshStatusLine(runtime: Chainpress, ctx: ExtensionContext): void {
  try {
    ctx.ui.setStatus(STATUS_KEY, runtime.settings.showStatusLine ? statusLine(runtime) : undefined);
  } catch {
    // A stale UI (session replaced) has no footer to update.
  }
}

function jsonChars(messages: readonly AgentMessage[]): number {
  let chars = 0;
  for (const message of messages) chars += JSON.stringify(message).length;
  return chars;
}

function tokens(chars: number): string {
  return `~${Math.round(chars / CHARS_PER_TOKEN).toLocaleString("en-US")}`;
}

/** Characters of the branch's context as pi would send it, raw and after chainpress's rendering. */
export function contextChars(runtime: Chainpress, sessionManager: SessionView): { raw: number; rendered: number } {
  const raw = contextMessages(branchEntries(sessionManager));
  const rendered = runtime.settings.enabled ? pruneMessages(raw, runtime.holder.state, pruneOptions(runtime)).messages : raw;
  return { raw: jsonChars(raw), rendered: jsonChars(rendered) };
}

/** The multi-line `/pruner status` text. */
export function statusReport(runtime: Chainpress, sessionManager: SessionView): string {
  const { settings, holder } = runtime;
  const chains = detectChains(sessionBranchMessages(sessionManager), runtime.isProtected);
  const closed = chains.filter((chain) => chain.finalAssistantTimestamp !== null).length;
  const totals = archiveTotals(runtime);
  const size = contextChars(runtime, sessionManager);
  const saved = size.raw - size.rendered;
  const counters = holder.diagnostics.counters;
  const lines = [
    `pruner: ${settings.enabled ? "on" : "off"} (window ${settings.chainCompression.rollingWindow}, grace ${settings.recoveryGraceTurns}, workers ${settings.workers})`,
    `chains: ${closed} closed, ${chains.length - closed} interrupted, ${holder.state.chains.size} compressed`,
    `archived: ${totals.records} outputs, ${totals.spilled} spilled${spillPlace(totals, blobDirOf(sessionManager))}`,
    `context: ${tokens(size.raw)} -> ${tokens(size.rendered)} tokens (${tokens(saved)} saved)`,
    `diagnostics: ${DIAG_LETTERS.map(([kind]) => `${kind} ${counters[kind]}`).join(", ")}`,
    `errors: ${holder.errors.length === 0 ? "none" : `${holder.errors.length}, last: ${holder.errors[holder.errors.length - 1]}`}`,
  ];
  const unsaved = holder.diagnostics.failures;
  if (unsaved.length > 0) lines.push(`diagnostics not persisted: ${unsaved.length} (${holder.diagnostics.failedAppends} failed appends), last: ${unsaved[unsaved.length - 1]}`);
  for (const warning of [...runtime.settingsWarnings, ...holder.reconstructWarnings.map(formatReconstructWarning)]) lines.push(`warning: ${warning}`);
  return lines.join("\n");
}

/** Where the spill files are; a folder is named only when it exists (nothing spilled: none is made). */
function spillPlace(totals: ArchiveTotals, blobDir: string | undefined): string {
  if (totals.spilled === 0) return "";
  if (blobDir === undefined) return ` (${totals.spilledBytes} bytes)`;
  return fs.existsSync(blobDir) ? ` (${totals.spilledBytes} bytes in ${blobDir})` : ` (${totals.spilledBytes} bytes; spill folder ${blobDir} is missing)`;
}
