/**
 * The search task a worker runs: archived outputs, inline or spilled, searched for one pattern.
 * Spill files are read as the query reads them (bounded, verified against their record); one that
 * cannot be read is reported, not searched. The main thread ranks what comes back
 * (main/search-archive.ts), so no archived byte is scanned on its thread.
 */

import { listedOutput, PatternMatcher, searchOutput, type SearchDoc, type SearchHit, type SearchPattern } from "../core/archive-search.js";
import { loadHasher } from "../core/digest.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { readSpilledBody } from "../io/read-spill.js";
import { jsonText } from "../core/json-text.js";

/** Where a searched output's text is: here, or in its spill file. */
export type SearchSource =
  | { kind: "inline"; text: string }
  | { kind: "spill"; record: Pick<ToolCallRecord, "toolCallId" | "toolName" | "spillPath" | "spillBytes" | "spillDigest" | "contentHash" | "resultTimestamp">; blobDir: string | undefined };

/**
 * A document as sent: the call's args as they are (made JSON here, not on the sending thread), or
 * as JSON already where they nest too deep to be cloned (core/json-text.ts CLONE_MAX_DEPTH).
 */
export type SearchTaskDoc = Omit<SearchDoc, "argsJson"> & { args: unknown; argsJson?: string; source: SearchSource };

export interface SearchTask {
  kind: "search-archive";
  /** Undefined for a listing: every document is a hit (core/archive-search.ts listedOutput). */
  pattern: SearchPattern | undefined;
  docs: SearchTaskDoc[];
}

export interface SearchTaskResult {
  hits: SearchHit[];
  /** Spilled outputs whose file could not be read, with why. */
  unreadable: Array<{ ref: string; detail: string }>;
}

export function isSearchTask(task: unknown): task is SearchTask {
  return typeof task === "object" && task !== null && (task as { kind?: unknown }).kind === "search-archive";
}

export async function runSearchTask(task: SearchTask): Promise<SearchTaskResult> {
  const hasher = await loadHasher();
  const hits: SearchHit[] = [];
  const unreadable: SearchTaskResult["unreadable"] = [];
  const matcher = task.pattern === undefined ? undefined : new PatternMatcher(task.pattern);
  for (const { source, args, argsJson, ...fields } of task.docs) {
    const doc: SearchDoc = { ...fields, argsJson: argsJson ?? jsonText(args ?? null) };
    let text: string;
    if (source.kind === "inline") text = source.text;
    else {
      const read = await readSpilledBody(source.record as ToolCallRecord, hasher, source.blobDir);
      if (!read.ok) {
        unreadable.push({ ref: doc.ref, detail: read.detail });
        continue;
      }
      text = read.text;
    }
    const hit = matcher === undefined ? listedOutput(doc, text) : searchOutput(doc, text, matcher);
    if (hit) hits.push(hit);
  }
  return { hits, unreadable };
}
