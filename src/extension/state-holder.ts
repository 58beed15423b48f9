/**
 * The extension's in-memory pruning state for the current branch. Rebuilt from
 * `ctx.sessionManager.getBranch()` on `session_start` and `session_tree` (pi reloads extensions
 * on a session switch, and tree navigation changes the branch under us). Each rebuild bumps
 * `generation`, which lets a flush that started on the old branch refuse to write to the new one.
 */

import path from "node:path";
import { EditTracker } from "./edit-tracker.js";
import type { SessionView } from "./session-view.js";
import { PruneState } from "../core/prune-state.js";
import type { DiagnosticReport } from "../core/prune-types.js";
import { reconstructState, type ReconstructWarning } from "../core/reconstruct.js";
import type { SessionEntry } from "../core/session-types.js";
import { blobDirFor } from "../core/spill-layout.js";
import { runSteps, stepDue, type Steps } from "../core/steps.js";
import type { AppendEntry } from "../main/append-entry.js";
import { DiagnosticSink } from "../main/diagnostic-sink.js";

/** Errors kept for `/pruner status`; older ones are dropped. */
const KEPT_ERRORS = 20;

export class StateHolder {
  state = new PruneState();
  /** Bumped on every rebuild: work started under an older generation must not append. */
  generation = 0;
  reconstructWarnings: ReconstructWarning[] = [];
  /** pi 1.6's context edits on the branch, followed as the branch grows. */
  edits = new EditTracker();
  readonly diagnostics: DiagnosticSink;
  /** Failures caught inside the extension, newest last. */
  readonly errors: string[] = [];
  /** Chains already announced as refused for good (one notice per chain per branch load). */
  readonly refusedNotified = new Set<number>();
  /** The session `state` was loaded from: its blob folder and edits stand in when a tool call comes without pi's context. */
  session: SessionView | undefined;
  private reporting: Promise<void> = Promise.resolve();

  constructor(append: AppendEntry) {
    this.diagnostics = new DiagnosticSink(append);
  }

  /** Rebuild from the active branch (session start, tree navigation). */
  reload(sessionManager: SessionView): void {
    const { state, warnings } = reconstructState(branchEntries(sessionManager));
    this.state = state;
    this.session = sessionManager;
    this.reconstructWarnings = warnings;
    this.edits = new EditTracker();
    this.generation++;
    this.diagnostics.reset();
    this.refusedNotified.clear();
  }

  /**
   * Persist render diagnostics one after the other: the sink marks a key as seen only once its
   * append resolved, so two concurrent reports of one key would both be written.
   */
  report(reports: readonly DiagnosticReport[]): Promise<void> {
    for (const report of reports) {
      this.reporting = this.reporting
        .then(() => this.diagnostics.report(report))
        .catch((error: unknown) => this.recordError(`diagnostic not persisted: ${(error as Error).message}`));
    }
    return this.reporting;
  }

  recordError(message: string): void {
    this.errors.push(message);
    if (this.errors.length > KEPT_ERRORS) this.errors.splice(0, this.errors.length - KEPT_ERRORS);
  }
}

/**
 * The active branch, root first, as `getBranch()` returns it, but walked in linear time: pi 0.73.1
 * builds it with `unshift`, quadratic in the branch length (tens of ms per call on a long
 * session, and the flush asks after every reply). pi's entries are structurally ours.
 */
export function branchEntries(sessionManager: SessionView): SessionEntry[] {
  return runSteps(branchEntriesSteps(sessionManager));
}

/**
 * branchEntries, pausable (core/steps.ts): the leaf is taken first, and a parent link never
 * changes. A corrupt cycle of parent links ends the walk where it is found (Brent's method: the
 * walk keeps one entry, moved ahead to where it is at every power of two, and stops on meeting
 * it again), within about twice the cycle's length. Bounding the walk by the count of the
 * session's entries instead meant asking pi for them, which copies all of them in one piece
 * (`getEntries`).
 */
export function* branchEntriesSteps(sessionManager: SessionView): Steps<SessionEntry[]> {
  const path: SessionEntry[] = [];
  let entry = sessionManager.getLeafEntry();
  let kept = entry;
  let power = 1;
  while (entry) {
    if (stepDue(path.length)) yield;
    path.push(entry as unknown as SessionEntry);
    entry = entry.parentId === null ? undefined : sessionManager.getEntry(entry.parentId);
    if (entry === kept) break;
    if (path.length === power) {
      kept = entry;
      power *= 2;
    }
  }
  return path.reverse();
}

/**
 * Spill folder next to the session file, `<session folder>/<session id>-blobs`, as pi-condense
 * puts it. Undefined for an in-memory session (`--no-session`): there is no file to sit next to.
 */
export function blobDirOf(sessionManager: SessionView): string | undefined {
  const file = sessionManager.getSessionFile();
  return file === undefined ? undefined : blobDirFor(path.dirname(path.resolve(file)), sessionManager.getSessionId());
}
