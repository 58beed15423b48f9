/**
 * What one context_tree_query call (or `chainpress query`) asks for, checked: whole outputs by
 * ref (or given non-text parts of one), one page of one output, or a search. The three are
 * exclusive; a call that mixes them, or gives a bad value, gets a message saying what to pass
 * instead. `hasImages` narrows a search to the outputs that hold images (true) or hold none
 * (false); `{"hasImages": true}` without search text lists the outputs holding images, newest
 * first. Pure.
 */

import { checkPattern, type SearchPattern } from "./archive-search.js";
import { parseOffset, type PagePlace } from "./output-pages.js";

export type QueryRequest =
  | { kind: "refs"; refs: string[]; /** Only these non-text parts of the one ref (numbered from 1, core/query-parts.ts), without its text. */ parts?: number[] }
  | { kind: "page"; ref: string; from: PagePlace }
  /** `pattern` undefined: a listing of the outputs holding images (`hasImages` true), newest first. */
  | { kind: "search"; pattern: SearchPattern | undefined; hasImages?: boolean; toolNames?: string[]; blockId?: string; limit: number };

/** The parameters as the tool and the command line take them. */
export interface QueryParams {
  toolCallIds?: unknown;
  offset?: unknown;
  parts?: unknown;
  search?: unknown;
  regex?: unknown;
  caseSensitive?: unknown;
  toolNames?: unknown;
  blockId?: unknown;
  limit?: unknown;
  hasImages?: unknown;
}

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;

/** The request, or a message for the caller. */
export function parseQueryRequest(params: QueryParams): QueryRequest | string {
  const refs = Array.isArray(params.toolCallIds) ? params.toolCallIds : params.toolCallIds === undefined ? undefined : null;
  if (refs === null || refs?.some((ref) => typeof ref !== "string" || ref === "")) return "toolCallIds must be a list of refs like [\"t12\"]";
  if (params.search !== undefined) {
    if (refs !== undefined && refs.length > 0) return "pass either search (to find outputs) or toolCallIds (to read them), not both";
    if (params.parts !== undefined) return "parts reads non-text parts of one output by ref: it goes with toolCallIds, not with search";
    return searchRequest(params);
  }
  if (params.hasImages !== undefined) {
    if (refs !== undefined && refs.length > 0) return 'hasImages narrows a search or lists outputs: it does not go with toolCallIds (a ref returns its images anyway)';
    if (params.parts !== undefined) return "parts reads non-text parts of one output by ref: it goes with toolCallIds, not with hasImages";
    return imagesRequest(params);
  }
  if (refs === undefined || refs.length === 0) return 'pass toolCallIds (refs like ["t12"]) to read outputs, or search (text to find) to find them';
  if (params.parts !== undefined) return partsRequest(refs as string[], params);
  if (params.offset === undefined) return { kind: "refs", refs: refs as string[] };
  if (refs.length !== 1) return "offset reads a page of one output: pass exactly one ref in toolCallIds";
  const from = parseOffset(params.offset);
  return typeof from === "string" ? from : { kind: "page", ref: refs[0] as string, from };
}

type SearchQuery = Extract<QueryRequest, { kind: "search" }>;

function partsRequest(refs: string[], params: QueryParams): QueryRequest | string {
  if (params.offset !== undefined) return "parts reads an output's non-text parts, offset a page of its text: pass one or the other";
  if (refs.length !== 1) return "parts reads non-text parts of one output: pass exactly one ref in toolCallIds";
  const parts = params.parts;
  if (!Array.isArray(parts) || parts.length === 0 || !parts.every((n) => Number.isSafeInteger(n) && (n as number) >= 1)) return "parts must be a list of part numbers from 1, as an output's Parts list numbers them, like [2, 3]";
  return { kind: "refs", refs, parts: [...new Set(parts as number[])] };
}

function searchRequest(params: QueryParams): QueryRequest | string {
  if (params.regex !== undefined && typeof params.regex !== "boolean") return "regex must be true or false";
  if (params.caseSensitive !== undefined && typeof params.caseSensitive !== "boolean") return "caseSensitive must be true or false";
  if (params.hasImages !== undefined && typeof params.hasImages !== "boolean") return "hasImages must be true or false";
  const pattern = checkPattern(params.search, params.regex === true, params.caseSensitive === true);
  if (typeof pattern === "string") return pattern;
  return withFilters({ kind: "search", pattern, ...(params.hasImages !== undefined ? { hasImages: params.hasImages as boolean } : {}) }, params);
}

/** `{"hasImages": true}` without search text: the outputs holding images, newest first. */
function imagesRequest(params: QueryParams): QueryRequest | string {
  if (params.hasImages !== true) {
    if (params.hasImages !== false) return "hasImages must be true or false";
    return 'hasImages false narrows a search: pass search text with it; {"hasImages": true} alone lists the outputs holding images';
  }
  if (params.regex !== undefined || params.caseSensitive !== undefined) return "regex and caseSensitive go with search text: pass search, or leave them out to list the outputs holding images";
  return withFilters({ kind: "search", pattern: undefined, hasImages: true }, params);
}

/** The limit and the tool and chain filters every search takes. */
function withFilters(asked: Omit<SearchQuery, "limit">, params: QueryParams): QueryRequest | string {
  const limit = params.limit ?? DEFAULT_SEARCH_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) return `limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`;
  const request: SearchQuery = { ...asked, limit };
  if (params.toolNames !== undefined) {
    if (!Array.isArray(params.toolNames) || !params.toolNames.every((name) => typeof name === "string")) return 'toolNames must be a list of tool names like ["bash"]';
    request.toolNames = params.toolNames as string[];
  }
  if (params.blockId !== undefined) {
    if (typeof params.blockId !== "string" || !/^b\d+$/.test(params.blockId)) return 'blockId must be a compressed chain\'s id like "b3"';
    request.blockId = params.blockId;
  }
  return request;
}
