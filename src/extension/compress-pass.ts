/**
 * One compression pass over the active branch, shared by the live flush and `/pruner compact`:
 * detect chains, pick the eligible ones, and run compressEligible on the worker pool. The pool is
 * only started when a chain is actually eligible.
 */

import fs from "node:fs";
import os from "node:os";
import { editsOnBranchSteps } from "../core/context-edits.js";
import { detectChainsSteps, withClosingMessage } from "../core/detect-chains.js";
import type { ChainRange } from "../core/prune-types.js";
import { recoveryGraceKeysSteps, selectEligible } from "../core/select-eligible.js";
import { branchMessagesSteps } from "../core/session-tree.js";
import type { AgentMessage } from "../core/session-types.js";
import { spillModesFor } from "../io/write-spill.js";
import type { AppendEntry } from "../main/append-entry.js";
import { driveSteps, pauseIfDue } from "../main/cooperative.js";
import { compressEligible, type CompressEligibleResult } from "../main/compress-eligible.js";
import { fileSliceFromLines } from "../main/file-slice.js";
import type { DeterministicPlan } from "../main/plan-chains.js";
import { readEntryLines, type EntryLines } from "../io/entry-lines.js";
import type { SpillSettings } from "../workers/chain-task.js";
import { pruneOptions } from "./context-handler.js";
import type { Chainpress } from "./runtime.js";
import type { SessionView } from "./session-view.js";
import { blobDirOf, branchEntriesSteps } from "./state-holder.js";

export interface PassInput {
  /** The detection array: branch messages, plus the closing message on the live path. */
  messages: AgentMessage[];
  chains: ChainRange[];
  graceKeys: Set<string>;
  /** The id of message i's entry (none for the closing message, which has no entry yet). */
  entryIdOf: (index: number) => string | undefined;
}

/**
 * Detection input for the branch; `closing` is the reply pi has not persisted yet. Every linear
 * pass over the branch runs in slices, so pi's UI gets a turn every few milliseconds (the flush
 * asks after every reply, and a large session has hundreds of thousands of entries).
 */
export async function passInput(runtime: Chainpress, sessionManager: SessionView, closing?: AgentMessage): Promise<PassInput> {
  const entries = await driveSteps(branchEntriesSteps(sessionManager));
  const positions = new Int32Array(entries.length);
  const edits = await driveSteps(editsOnBranchSteps(entries));
  const branch = await driveSteps(branchMessagesSteps(entries, positions, edits));
  const messages = withClosingMessage(branch, closing);
  const chains = await driveSteps(detectChainsSteps(messages, runtime.isProtected));
  // An edited message is not its line in the file: it must not be read from there.
  const entryIdOf = (index: number) => {
    const id = index < branch.length ? entries[positions[index]!]!.id : undefined;
    return id === undefined || edits.has(id) ? undefined : id;
  };
  // Upstream computes grace from the persisted branch only (reference §9.3 step 6).
  return { messages, chains, graceKeys: await driveSteps(recoveryGraceKeysSteps(branch, runtime.settings.recoveryGraceTurns)), entryIdOf };
}

export function eligibleChains(runtime: Chainpress, input: PassInput, rollingWindow: number): ChainRange[] {
  const state = runtime.holder.state;
  return selectEligible(input.chains, rollingWindow, (start) => state.isCompressed(start), input.graceKeys);
}

export function eligibleCount(runtime: Chainpress, input: PassInput, rollingWindow: number): number {
  return eligibleChains(runtime, input, rollingWindow).length;
}

/**
 * Runs the pass. With `lines` (the session file's, `linesOnDisk`), the workers read each chain's
 * lines from the file themselves, and pi's thread encodes only the chains not found there.
 */
export async function runPass(runtime: Chainpress, sessionManager: SessionView, input: PassInput, rollingWindow: number, append: AppendEntry, lines?: EntryLines): Promise<CompressEligibleResult> {
  return compressEligible({
    source: lines ? { kind: "memory", linesOnDisk: (plan: DeterministicPlan) => fileSliceFromLines(lines, input.messages, input.entryIdOf, plan) } : { kind: "memory" },
    messages: input.messages,
    chains: input.chains,
    state: runtime.holder.state,
    rollingWindow,
    graceKeys: input.graceKeys,
    append,
    diagnostics: runtime.holder.diagnostics,
    spill: spillSettings(runtime, sessionManager),
    runner: runtime.runner.get(),
    render: pruneOptions(runtime),
  });
}

/**
 * Where the session file's message lines are, for `/pruner compact` with worker threads: read once
 * per command (reads off pi's thread, splitting into lines on it), and only when a chain is
 * eligible. Without threads the chain tasks run on pi's thread, where parsing a chain's lines held
 * the event loop longer than decoding its encoding (bench:pi). The live flush encodes too: it runs
 * after every reply, and its newest chain ends with a reply pi has not written yet.
 */
export async function sessionLines(runtime: Chainpress, sessionManager: SessionView, input: PassInput, rollingWindow: number): Promise<EntryLines | undefined> {
  const file = sessionManager.getSessionFile();
  if (file === undefined || !fs.existsSync(file) || eligibleCount(runtime, input, rollingWindow) === 0) return undefined;
  // The pass starts the pool now in any case: a chain is eligible.
  return runtime.runner.get().workers === 0 ? undefined : readEntryLines(file, pauseIfDue);
}

/** Without a session file (`--no-session`) nothing is spilled: outputs stay inline, in memory. */
export function spillSettings(runtime: Chainpress, sessionManager: SessionView): SpillSettings {
  const blobDir = blobDirOf(sessionManager);
  const { spillThreshold, spillPreviewBytes } = runtime.settings;
  if (blobDir === undefined) return { blobDir: os.tmpdir(), threshold: Number.POSITIVE_INFINITY, previewBytes: spillPreviewBytes, fileMode: 0o600, dirMode: 0o700 };
  return { blobDir, threshold: spillThreshold, previewBytes: spillPreviewBytes, ...spillModesFor(sessionFileMode(sessionManager)) };
}

/** Spill files get the session file's permissions; before pi creates the file, owner-only. */
function sessionFileMode(sessionManager: SessionView): number {
  try {
    return fs.statSync(sessionManager.getSessionFile()!).mode;
  } catch {
    return 0o600;
  }
}

/** Causes of chains a failure left uncompressed (worker, spill I/O, append); the next pass retries them. */
export function failedSkips(result: CompressEligibleResult): string[] {
  return result.skipped.filter((skip) => skip.failed === true).map((skip) => skip.cause ?? "unknown cause");
}
