/**
 * The map of a compressed chain: which archived call did what, so the model can name the ref it
 * needs instead of guessing. Rendered below the chain's body from the archived records alone (the
 * session entries stay as upstream writes them), and the same records always give the same bytes.
 *
 * One line per call target: its refs in call order (`!` marks a failed call, `*` an output that
 * holds images), the tool, and the target (core/call-target.ts). The header's legend names `*`
 * only in a chain with such an output, so a text-only chain's map is what it always was. A target
 * called several times is one line, so reading one file five times costs one line. A chain's map
 * is cut at its share of the budget; the cut says how many calls it left out and that search
 * finds them. Pure.
 */

import { callPath, callTarget } from "./call-target.js";

/** One archived call as the map shows it. */
export interface MapCall {
  ref: string;
  toolName: string;
  args: unknown;
  failed: boolean;
  /** The output holds images (core/archived-parts.ts holdsImages) that an edit did not hide. */
  images?: boolean;
}

/** What the map may cost: per chain, and for all chains of one rendered context together. */
export interface MapBudget {
  /** UTF-16 units one chain's map may take. */
  perChain: number;
  /** UTF-16 units all maps of one context may take; spent in chain order, so older maps never change. */
  total: number;
}

/** The `archiveMap` settings (core/settings.ts). */
export interface ArchiveMapSettings {
  enabled: boolean;
  maxCharsPerChain: number;
  maxCharsTotal: number;
}

/**
 * Per chain: ~500 tokens, room for ~40 call targets, which lists the bundled session's chains whole
 * while a large chain's map costs a small fraction of what it maps. All chains: ~10k tokens, about
 * twenty chains' maps in full. Figures: bench/RESULTS.md (archive map).
 */
export const DEFAULT_ARCHIVE_MAP: ArchiveMapSettings = { enabled: true, maxCharsPerChain: 2_000, maxCharsTotal: 40_000 };

/** The budget the settings give, or undefined when the map is off. */
export function mapBudgetOf(settings: ArchiveMapSettings): MapBudget | undefined {
  return settings.enabled ? { perChain: settings.maxCharsPerChain, total: settings.maxCharsTotal } : undefined;
}

export const MAP_HEADER = 'Map (ref tool target; ! = failed). More: context_tree_query {"search":"text"}, or {"toolCallIds":["tN"],"offset":"…"} for later pages:';

/** The header of a chain whose map marks an output holding images: its legend says what `*` is. */
export const IMAGES_MAP_HEADER = MAP_HEADER.replace("! = failed)", "! = failed; * = holds images)");

/** Marks an output that holds images, after its ref. */
export const IMAGES_MARK = "*";

/** A line shorter than this is not worth a map: only the count line is written. Either header fits in it. */
export const MIN_MAP_CHARS = MAP_HEADER.length + 40;

interface Group {
  refs: string[];
  toolName: string;
  target: string;
}

/**
 * The map text of one chain within `budget` units (the line that counts calls left out comes on
 * top of it, and is all there is when the budget cannot hold a map). `calls` in ref order.
 */
export function chainMapText(calls: readonly MapCall[], budget: number): string {
  if (calls.length === 0) return "";
  const prefix = commonFolder(calls);
  const groups = groupCalls(calls, prefix);
  const lines: string[] = [];
  let used = 0;
  let listed = 0;
  if (budget >= MIN_MAP_CHARS) {
    const legend = calls.some((call) => call.images === true) ? IMAGES_MAP_HEADER : MAP_HEADER;
    const header = prefix === undefined ? legend : `${legend}\n(paths under ${prefix})`;
    used = header.length;
    lines.push(header);
    for (const group of groups) {
      const line = `${group.refs.join(" ")} ${group.toolName}${group.target === "" ? "" : ` ${group.target}`}`;
      if (used + 1 + line.length > budget) break;
      lines.push(line);
      used += 1 + line.length;
      listed += group.refs.length;
    }
  }
  const left = calls.length - listed;
  if (left > 0) lines.push(notListedLine(left, calls.length));
  return lines.join("\n");
}

function notListedLine(left: number, total: number): string {
  return `(${left === total ? "no map: " : ""}${left} call${left === 1 ? "" : "s"} not listed; context_tree_query {"search":"text"} finds them)`;
}

/** Spends a context's map budget chain by chain, in the order the chains are rendered. */
export class MapAllowance {
  private left: number;
  constructor(private readonly budget: MapBudget) {
    this.left = budget.total;
  }

  /**
   * The map of the next chain, of `count` calls, charged to what is left. `calls` is asked for only
   * when the budget left can hold a map: past it, a chain's map is its count line, the same bytes
   * chainMapText gives, without grouping every call of every older chain on each render.
   */
  next(count: number, calls: () => readonly MapCall[]): string {
    const budget = Math.min(this.budget.perChain, Math.max(0, this.left));
    const text = count === 0 ? "" : budget < MIN_MAP_CHARS ? notListedLine(count, count) : chainMapText(calls(), budget);
    this.left -= text.length;
    return text;
  }
}

/** Calls with one tool and target, in the order each first appears. */
function groupCalls(calls: readonly MapCall[], prefix: string | undefined): Group[] {
  const byKey = new Map<string, Group>();
  for (const call of calls) {
    const target = callTarget(call.args, (path) => relative(path, prefix));
    const key = `${call.toolName}\u0000${target}`;
    let group = byKey.get(key);
    if (group === undefined) byKey.set(key, (group = { refs: [], toolName: call.toolName, target }));
    group.refs.push(`${call.ref}${call.failed ? "!" : ""}${call.images === true ? IMAGES_MARK : ""}`);
  }
  return [...byKey.values()];
}

/** The folder (ending in "/") that every absolute path of the chain's file calls lies in, when it saves anything. */
function commonFolder(calls: readonly MapCall[]): string | undefined {
  let common: string | undefined;
  let count = 0;
  for (const call of calls) {
    const path = callPath(call.args);
    if (path === undefined || !path.startsWith("/")) continue;
    const folder = path.slice(0, path.lastIndexOf("/") + 1);
    common = common === undefined ? folder : sharedFolder(common, folder);
    count++;
  }
  // Two segments at least ("/home/u/"), and two paths to share it: otherwise nothing is saved.
  if (common === undefined || count < 2 || common.split("/").length < 4) return undefined;
  return common;
}

function sharedFolder(a: string, b: string): string {
  let end = 0;
  for (let i = 0; i < Math.min(a.length, b.length) && a[i] === b[i]; i++) if (a[i] === "/") end = i + 1;
  return a.slice(0, end);
}

function relative(path: string, prefix: string | undefined): string {
  return prefix !== undefined && path.startsWith(prefix) && path.length > prefix.length ? path.slice(prefix.length) : path;
}
