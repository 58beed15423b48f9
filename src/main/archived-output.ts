/**
 * One archived output, read whole as the model may read it: through a context edit that changed
 * it, else from its record or its verified spill file. What paging (context_tree_query `offset`,
 * `chainpress query --offset`) reads before it cuts a page. Its non-text parts, read back for a
 * query or for `--parts`, are hidden with its text by any edit of it.
 */

import { partFacts, type ArchivedPart } from "../core/archived-parts.js";
import { editedOutputOf, editedRecordText, type EditedOutput } from "../core/context-edits.js";
import { loadHasher, type Hasher } from "../core/digest.js";
import type { PruneState } from "../core/prune-state.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { findRecords, type QueryMatch } from "../core/query.js";
import { budgetFit, fullImageBudget, imageContentOf, isAttachableFacts, partLine, spend, type ImageBudget, type ImageContent, type PartLine } from "../core/query-parts.js";
import { readArchivedPart, type PartReadResult } from "../io/read-part.js";
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

/** What a query gives of one output's non-text parts: a line for each part listed, and the images attached, in order. */
export interface QueriedParts {
  /** Parts the output has (record.parts), listed or not; 0 for an output a context edit changed or omitted. */
  total: number;
  lines: PartLine[];
  images: ImageContent[];
}

export const NO_PARTS: QueriedParts = { total: 0, lines: [], images: [] };

/**
 * An output's non-text parts for a query, in content order: each attachable image read back
 * (verified) and attached while `budget` allows, spending it; every other part listed with why
 * not. `only`: the part numbers asked for (a call with `parts`). `imagesBefore`: images the call
 * attached before this output. An output a context edit changed or omitted shows none: its parts
 * are hidden with its text.
 */
export async function queryParts(
  record: ToolCallRecord,
  edited: ReadonlyMap<string, EditedOutput>,
  read: { hasher: Hasher; blobDir: string | undefined; budget: ImageBudget; imagesBefore: number; only?: readonly number[] },
): Promise<QueriedParts> {
  const parts = record.parts;
  if (parts === undefined || parts.length === 0 || editedOutputOf(record, edited) !== undefined) return NO_PARTS;
  const lines: PartLine[] = [];
  const images: ImageContent[] = [];
  for (const [index, archived] of parts.entries()) {
    const n = index + 1;
    if (read.only !== undefined && !read.only.includes(n)) continue;
    const facts = partFacts(archived);
    const inline = archived.kind === "inline" ? archived.part : undefined;
    if (!isAttachableFacts(facts)) {
      lines.push(partLine(n, archived, { kind: "kept" }, inline));
      continue;
    }
    const fit = budgetFit(read.budget, facts.dataChars!);
    if (fit !== "fits") {
      lines.push(partLine(n, archived, { kind: fit }, inline));
      continue;
    }
    const got = await readArchivedPart(record, archived, read.hasher, read.blobDir);
    const image = got.ok ? imageContentOf(got.part, facts) : undefined;
    if (!got.ok || image === undefined) {
      lines.push(partLine(n, archived, got.ok ? { kind: "kept" } : { kind: "unavailable", reason: got.reason, detail: got.detail }));
      continue;
    }
    spend(read.budget, image.data.length);
    images.push(image);
    lines.push(partLine(n, archived, { kind: "attached", image: read.imagesBefore + images.length }, got.part));
  }
  return { total: parts.length, lines, images };
}

/**
 * The parts of every output one call (context_tree_query, `chainpress query`) shows, in call
 * order: one image budget across them all, and the images attached so far.
 */
export interface CallParts {
  readonly images: ImageContent[];
  of(record: ToolCallRecord, only?: readonly number[]): Promise<QueriedParts>;
}

export function callParts(edited: ReadonlyMap<string, EditedOutput>, hasher: Hasher, blobDir: string | undefined): CallParts {
  const budget = fullImageBudget();
  const images: ImageContent[] = [];
  return {
    images,
    async of(record, only) {
      const got = await queryParts(record, edited, { hasher, blobDir, budget, imagesBefore: images.length, ...(only === undefined ? {} : { only }) });
      images.push(...got.images);
      return got;
    },
  };
}

/** Every non-text part of an output, read back (`chainpress query --parts`); none of one a context edit changed or omitted. */
export async function readAllParts(record: ToolCallRecord, edited: ReadonlyMap<string, EditedOutput>, hasher: Hasher, blobDir: string | undefined): Promise<Array<{ n: number; archived: ArchivedPart; read: PartReadResult }>> {
  const parts = record.parts;
  if (parts === undefined || editedOutputOf(record, edited) !== undefined) return [];
  const out: Array<{ n: number; archived: ArchivedPart; read: PartReadResult }> = [];
  for (const [index, archived] of parts.entries()) out.push({ n: index + 1, archived, read: await readArchivedPart(record, archived, hasher, blobDir) });
  return out;
}
