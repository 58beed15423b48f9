/**
 * What `/pruner status` and the footer status line say. The status line is cheap (counters only)
 * because it is refreshed after every flush; the full report measures the rendered context and
 * is computed only on request.
 */

import fs from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { addTally, emptyTally, imageBillOf, imageTallyText, type ImageTally } from "../core/billed-size.js";
import { CHARS_PER_TOKEN } from "../core/defaults.js";
import { digitGroups } from "../core/digit-groups.js";
import { editsOnBranchSteps, type ContextEdits, type EditedOutput } from "../core/context-edits.js";
import { describeUnknownKind, unknownEntryKinds } from "../core/entry-kinds.js";
import { detectChainsSteps } from "../core/detect-chains.js";
import type { DiagnosticKind } from "../core/prune-types.js";
import { formatReconstructWarning } from "../core/reconstruct.js";
import { pruneMessagesSteps } from "../core/render/prune-messages.js";
import type { AgentMessage, SessionEntry } from "../core/session-types.js";
import { branchMessagesSteps, contextMessagesSteps } from "../core/session-tree.js";
import { StepBudget, type Steps } from "../core/steps.js";
import { driveSteps } from "../main/cooperative.js";
import { BILL_REPLAY_MAX_BYTES, billSoFar, billSoFarLine, billTooLargeLine } from "./bill-so-far.js";
import { pruneOptions } from "./context-handler.js";
import type { Chainpress, CompactCost } from "./runtime.js";
import type { SessionView } from "./session-view.js";
import { blobDirOf, branchEntriesSteps } from "./state-holder.js";
import { jsonText } from "../core/json-text.js";

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

/**
 * A message serialised costs a step's unit per this many characters, on top of its own, so a step
 * of messages whose outputs are large still holds pi's UI for no longer than a small one.
 */
const SERIALISED_CHARS_PER_UNIT = 4096;

/** JSON characters of `messages`, images as billed (core/billed-size.ts), each JSON length remembered in `lengthOf` (Chainpress.messageLengths). */
function* jsonCharsSteps(messages: readonly AgentMessage[], lengthOf: WeakMap<object, number>): Steps<{ chars: number; images: ImageTally }> {
  const budget = new StepBudget();
  let chars = 0;
  const images = emptyTally();
  for (const message of messages) {
    let length = lengthOf.get(message);
    let units = 1;
    if (length === undefined) {
      length = jsonText(message).length;
      lengthOf.set(message, length);
      units += Math.floor(length / SERIALISED_CHARS_PER_UNIT);
    }
    const bill = imageBillOf(message);
    chars += length + bill.delta;
    addTally(images, bill.tally);
    if (budget.spend(units)) yield;
  }
  return { chars, images };
}

/** "; 3 images as ~2,097 tokens (3 by pixel size)" in the rendered context, nothing without images. */
function imagesNote(images: ImageTally): string {
  const text = imageTallyText(images);
  return text === "" ? "" : `; ${text}`;
}

function tokens(chars: number): string {
  return `~${digitGroups(Math.round(chars / CHARS_PER_TOKEN))}`;
}

/**
 * Characters of the branch's context as pi would send it, raw and after chainpress's rendering.
 * In slices: on a large session one pass over it held pi's UI for a quarter of a second.
 */
function* contextCharsSteps(runtime: Chainpress, branch: readonly SessionEntry[], edits: ContextEdits, outputs: ReadonlyMap<string, EditedOutput>): Steps<{ raw: number; rendered: number; images: ImageTally }> {
  const raw = yield* contextMessagesSteps(branch, undefined, edits);
  const options = { ...pruneOptions(runtime), editedOutputs: outputs };
  const rendered = runtime.settings.enabled ? (yield* pruneMessagesSteps(raw, runtime.holder.state, options)).messages : raw;
  const before = yield* jsonCharsSteps(raw, runtime.messageLengths);
  const after = yield* jsonCharsSteps(rendered, runtime.messageLengths);
  return { raw: before.chars, rendered: after.chars, images: after.images };
}

/** The multi-line `/pruner status` text. */
export async function statusReport(runtime: Chainpress, sessionManager: SessionView): Promise<string> {
  const { settings, holder } = runtime;
  const branch = await driveSteps(branchEntriesSteps(sessionManager));
  const edits = await driveSteps(editsOnBranchSteps(branch));
  const chains = await driveSteps(detectChainsSteps(await driveSteps(branchMessagesSteps(branch, undefined, edits)), runtime.isProtected));
  const closed = chains.filter((chain) => chain.finalAssistantTimestamp !== null).length;
  const totals = archiveTotals(runtime);
  const size = await driveSteps(contextCharsSteps(runtime, branch, edits, holder.edits.editedOutputs(sessionManager)));
  const saved = size.raw - size.rendered;
  const counters = holder.diagnostics.counters;
  const lines = [
    `pruner: ${settings.enabled ? "on" : "off"} (window ${settings.chainCompression.rollingWindow}, grace ${settings.recoveryGraceTurns}, workers ${settings.workers})`,
    `chains: ${closed} closed, ${chains.length - closed} interrupted, ${holder.state.chains.size} compressed`,
    `archived: ${totals.records} outputs, ${totals.spilled} spilled${spillPlace(totals, blobDirOf(sessionManager))}`,
    `context: ${tokens(size.raw)} -> ${tokens(size.rendered)} tokens (${tokens(saved)} saved)${imagesNote(size.images)}`,
    savingLine(branch, settings, sessionManager),
    `diagnostics: ${DIAG_LETTERS.map(([kind]) => `${kind} ${counters[kind]}`).join(", ")}`,
    `errors: ${holder.errors.length === 0 ? "none" : `${holder.errors.length}, last: ${holder.errors[holder.errors.length - 1]}`}`,
  ];
  if (runtime.lastCompact) lines.push(lastCompactLine(runtime.lastCompact));
  const unsaved = holder.diagnostics.failures;
  if (unsaved.length > 0) lines.push(`diagnostics not persisted: ${unsaved.length} (${holder.diagnostics.failedAppends} failed appends), last: ${unsaved[unsaved.length - 1]}`);
  const unknownKinds = unknownEntryKinds(sessionManager.getEntries() as SessionEntry[]).map(describeUnknownKind);
  for (const warning of [...runtime.settingsWarnings, ...holder.reconstructWarnings.map(formatReconstructWarning), ...unknownKinds]) lines.push(`warning: ${warning}`);
  return lines.join("\n");
}

/** The saving so far, replayed unless the session file is too large to replay on pi's thread. */
function savingLine(branch: readonly SessionEntry[], settings: Chainpress["settings"], sessionManager: SessionView): string {
  const file = sessionManager.getSessionFile();
  const bytes = file !== undefined && fs.existsSync(file) ? fs.statSync(file).size : 0;
  if (file !== undefined && bytes > BILL_REPLAY_MAX_BYTES) return billTooLargeLine(file, bytes);
  return billSoFarLine(billSoFar(branch, settings));
}

/** "last compact: 2 chains (2 read from the session file) in 1.52 s, event loop max 18 ms, peak RSS 412 MB". */
function lastCompactLine(cost: CompactCost): string {
  const fromFile = cost.chainsFromFile > 0 ? ` (${cost.chainsFromFile} read from the session file)` : "";
  const chains = `${cost.chains} chain${cost.chains === 1 ? "" : "s"}${fromFile}`;
  return `last compact: ${chains} in ${(cost.wallMs / 1000).toFixed(2)} s, event loop max ${Math.round(cost.eventLoopMaxMs)} ms, peak RSS ${Math.round(cost.peakRssBytes / 1e6)} MB`;
}

/** Where the spill files are; a folder is named only when it exists (nothing spilled: none is made). */
function spillPlace(totals: ArchiveTotals, blobDir: string | undefined): string {
  if (totals.spilled === 0) return "";
  if (blobDir === undefined) return ` (${totals.spilledBytes} bytes)`;
  return fs.existsSync(blobDir) ? ` (${totals.spilledBytes} bytes in ${blobDir})` : ` (${totals.spilledBytes} bytes; spill folder ${blobDir} is missing)`;
}
