/**
 * One archived output, read whole as the model may read it: through a context edit that changed
 * it, else from its record or its verified spill file. What paging (context_tree_query `offset`,
 * `chainpress query --offset`) reads before it cuts a page.
 */

import { editedRecordText, type EditedOutput } from "../core/context-edits.js";
import { loadHasher, type Hasher } from "../core/digest.js";
import type { PruneState } from "../core/prune-state.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { findRecords, type QueryMatch } from "../core/query.js";
import { resolveRecordBody, type SpillReadResult } from "../io/read-spill.js";

export type OutputRead = { ok: true; match: QueryMatch; text: string } | { ok: false; message: string };

export async function readArchivedOutput(state: PruneState, ref: string, edited: ReadonlyMap<string, EditedOutput>, blobDir: string | undefined): Promise<OutputRead> {
  const matches = findRecords(state, ref);
  if (matches.length === 0) return { ok: false, message: `unknown ref: ${ref} (not found in the archive \u2014 may not have been compressed yet)` };
  if (matches.length > 1) return { ok: false, message: `${ref} names ${matches.length} outputs; page one of them: ${matches.map((m) => m.label).join(", ")}` };
  const match = matches[0]!;
  const body = await readRecordText(match.record, edited, await loadHasher(), blobDir);
  return body.ok ? { ok: true, match, text: body.text } : { ok: false, message: `${match.label}: the full output cannot be read (${body.detail}); its preview is all that is left: query it without offset` };
}

/** A record's whole text as the model may read it: a context edit's, else its own or its verified spill file's. */
export function readRecordText(record: ToolCallRecord, edited: ReadonlyMap<string, EditedOutput>, hasher: Hasher, blobDir: string | undefined): Promise<SpillReadResult> {
  const editedText = editedRecordText(record, edited);
  return editedText === undefined ? resolveRecordBody(record, hasher, blobDir) : Promise.resolve({ ok: true, text: editedText });
}
