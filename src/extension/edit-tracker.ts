/**
 * The context edits on pi's active branch, kept up to date without walking the whole branch on
 * every model call: from the current leaf back to the leaf seen last, only the new entries are
 * read. When the last leaf is not on the branch any more (tree navigation), the branch is read
 * again. What it keeps is what the render and context_tree_query need: which archived outputs an
 * edit changed, and what the model may see of them.
 */

import { editedOutputs, editsOnBranch, type EditedOutput } from "../core/context-edits.js";
import type { SessionEntry } from "../core/session-types.js";
import type { SessionView } from "./session-view.js";
import { branchEntries } from "./state-holder.js";

export class EditTracker {
  private leafId: string | null | undefined;
  /** Every context edit on the branch, oldest first. */
  private edits: SessionEntry[] = [];
  private outputs: ReadonlyMap<string, EditedOutput> = new Map();

  /** Archived outputs a context edit on the current branch changed (see core/context-edits.ts editedOutputs). */
  editedOutputs(sessionManager: SessionView): ReadonlyMap<string, EditedOutput> {
    const leaf = sessionManager.getLeafEntry() as SessionEntry | undefined;
    const leafId = leaf?.id ?? null;
    if (leafId === this.leafId) return this.outputs;
    const added = this.newEdits(sessionManager, leaf);
    this.leafId = leafId;
    if (added === undefined) this.edits = branchEntries(sessionManager).filter(isContextEdit);
    else if (added.length > 0) this.edits = [...this.edits, ...added];
    else return this.outputs;
    this.outputs = this.edits.length === 0 ? new Map() : editedOutputs(this.targets(sessionManager), editsOnBranch(this.edits));
    return this.outputs;
  }

  /** Edits between the last leaf and `leaf`, oldest first; undefined when the last leaf is not an ancestor. */
  private newEdits(sessionManager: SessionView, leaf: SessionEntry | undefined): SessionEntry[] | undefined {
    if (this.leafId === undefined) return undefined;
    const found: SessionEntry[] = [];
    for (let entry = leaf; entry !== undefined; entry = parentOf(sessionManager, entry)) {
      if (entry.id === this.leafId) return found.reverse();
      if (isContextEdit(entry)) found.push(entry);
    }
    return this.leafId === null ? found.reverse() : undefined;
  }

  /** The entries the edits target (what editedOutputs reads). */
  private targets(sessionManager: SessionView): SessionEntry[] {
    const targets: SessionEntry[] = [];
    for (const edit of this.edits) {
      // As pi's own lookup: by the targetId as written, whatever its shape (core/context-edits.ts).
      const target = sessionManager.getEntry((edit as { targetId?: unknown }).targetId as string) as SessionEntry | undefined;
      if (target !== undefined) targets.push(target);
    }
    return targets;
  }
}

function parentOf(sessionManager: SessionView, entry: SessionEntry): SessionEntry | undefined {
  return entry.parentId === null ? undefined : (sessionManager.getEntry(entry.parentId) as SessionEntry | undefined);
}

function isContextEdit(entry: SessionEntry): boolean {
  return entry.type === "context_edit";
}
