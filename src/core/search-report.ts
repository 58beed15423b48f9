/**
 * What a search returns to the model, and to `chainpress query --search --json`: the best hits
 * first, each with its ref, tool, target, size, chain and a few matching lines; bounded, and
 * saying how many hits it left out and how to read one. A hit on an output with images says what
 * they are; a search narrowed by `hasImages` says so in its first line; a listing (no pattern)
 * names the outputs holding images, newest first. Pure.
 */

import { quotedPattern, type SearchHit, type SearchPattern } from "./archive-search.js";
import { digitGroups } from "./digit-groups.js";
import { partsNoteText } from "./part-notes.js";
import { MAX_SEARCH_LIMIT } from "./query-request.js";

/** What the search found, as main/search-archive.ts returns it. */
export interface SearchFindings {
  hits: SearchHit[];
  total: number;
  searched: number;
  unreadable: Array<{ ref: string; detail: string }>;
}

function describePattern(pattern: SearchPattern): string {
  const text = pattern.kind === "literal" ? quotedPattern(pattern.text) : quotedPattern(pattern.source, (shown) => `/${shown}/`);
  return `${text} (${pattern.kind === "literal" ? "literal" : "regular expression"}, ${pattern.caseSensitive ? "case-sensitive" : "case-insensitive"})`;
}

function hitBlock(hit: SearchHit, rank: number, listing: boolean): string {
  const where = hit.blockId === null ? "open chain" : hit.blockId;
  const found = listing ? "" : `, ${hit.matches === 0 ? "args match" : `${digitGroups(hit.matches)} match${hit.matches === 1 ? "" : "es"}${hit.inArgs ? ", args match" : ""}`}`;
  const note = hit.parts === undefined ? undefined : partsNoteText(hit.parts);
  const head = `${rank}. ${hit.ref} ${hit.toolName}${hit.target === "" ? "" : ` ${hit.target}`} (${where}, ${digitGroups(hit.chars)} chars${found})${note === undefined ? "" : `; holds ${note}`}`;
  return [head, ...hit.lines.map((line) => `   ${line.line}: ${line.text}`)].join("\n");
}

/** The first line's words for what was asked: the pattern, narrowed by hasImages; or the listing. */
function describeAsked(pattern: SearchPattern | undefined, hasImages: boolean | undefined, total: number, searched: number): string {
  const outputs = `${digitGroups(searched)} archived output${searched === 1 ? "" : "s"}`;
  if (pattern === undefined) return `Archived outputs holding images: ${digitGroups(total)}`;
  const narrowed = hasImages === undefined ? "" : hasImages ? " in outputs holding images" : " in outputs holding no images";
  return `Search ${describePattern(pattern)}${narrowed}: ${digitGroups(total)} hit${total === 1 ? "" : "s"} in ${outputs}`;
}

/** The tool's text for a search, or for a listing (`pattern` undefined: `{"hasImages": true}` alone). */
export function searchText(pattern: SearchPattern | undefined, findings: SearchFindings, hasImages?: boolean): string {
  const { hits, total, searched } = findings;
  const listing = pattern === undefined;
  const head = describeAsked(pattern, hasImages, total, searched);
  if (total === 0) return `${head}.${unreadableLine(findings)}`;
  const lines = [`${head}; ${listing ? "newest" : "best"} first:`, ...hits.map((hit, i) => hitBlock(hit, i + 1, listing))];
  const left = total - hits.length;
  if (left > 0) lines.push(`${digitGroups(left)} more ${listing ? "output" : "hit"}${left === 1 ? "" : "s"} not shown: raise limit (up to ${MAX_SEARCH_LIMIT}), or narrow with toolNames or blockId.`);
  lines.push(`Read one: context_tree_query {"toolCallIds":["${hits[0]!.ref}"]}; later pages with "offset".${unreadableLine(findings)}`);
  return lines.join("\n");
}

function unreadableLine(findings: SearchFindings): string {
  const count = findings.unreadable.length;
  if (count === 0) return "";
  return `\n${count} spilled output${count === 1 ? "" : "s"} could not be searched: ${findings.unreadable.slice(0, 3).map((u) => `${u.ref} (${u.detail})`).join("; ")}${count > 3 ? "; …" : ""}`;
}

/** `chainpress query --search --json`: the hits best first, and what was left out. */
export function searchJson(findings: SearchFindings): object {
  return {
    hits: findings.hits.map(({ ref, toolCallId, toolName, target, blockId, chars, matches, inArgs, lines, score, parts }) => ({
      ref,
      toolCallId,
      toolName,
      target,
      blockId,
      chars,
      matches,
      inArgs,
      lines,
      score,
      ...(parts === undefined ? {} : { parts }),
    })),
    total: findings.total,
    shown: findings.hits.length,
    searched: findings.searched,
    unreadable: findings.unreadable,
  };
}
