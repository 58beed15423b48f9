/**
 * A call's main target in a few words: the path a file tool worked on, the first words of a
 * command, a search pattern. One definition for the archive map, the open-chain stubs and search
 * hits, so the model sees the same words for the same call everywhere. Pure.
 */

/** Targets longer than this are shortened (a path keeps its end, the file name). */
export const TARGET_MAX_CHARS = 72;

const PATH_KEYS = ["path", "file_path", "filePath", "file", "filename", "notebook_path", "dir", "directory", "cwd"];
const COMMAND_KEYS = ["command", "cmd", "script"];
const PATTERN_KEYS = ["pattern", "query", "regex", "search", "glob", "url", "name", "prompt", "description"];

/**
 * The target of a call with these args; "" when the args name nothing recognisable. `showPath`
 * rewrites a path before it is shortened (the map shows paths relative to a chain's folder).
 */
export function callTarget(args: unknown, showPath: (path: string) => string = (path) => path): string {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return typeof args === "string" ? shortText(args) : "";
  const record = args as Record<string, unknown>;
  const command = firstString(record, COMMAND_KEYS);
  if (command !== undefined) return shortText(command);
  const pattern = firstString(record, PATTERN_KEYS);
  const found = firstString(record, PATH_KEYS) ?? firstOfList(record.paths);
  const path = found === undefined ? undefined : showPath(found);
  if (pattern !== undefined) return path === undefined ? shortText(pattern) : `${shortText(pattern, 40)} in ${shortPath(path, 32)}`;
  if (path !== undefined) return shortPath(path);
  const any = Object.values(record).find((value): value is string => typeof value === "string" && value.trim() !== "");
  return any === undefined ? "" : shortText(any);
}

/** The path a file call worked on, whole (for matching a search or a test), or undefined. */
export function callPath(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const record = args as Record<string, unknown>;
  return firstString(record, PATH_KEYS) ?? firstOfList(record.paths);
}

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return undefined;
}

function firstOfList(value: unknown): string | undefined {
  if (!Array.isArray(value)) return undefined;
  const first = value.find((item): item is string => typeof item === "string" && item !== "");
  if (first === undefined) return undefined;
  return value.length > 1 ? `${first} +${value.length - 1}` : first;
}

/** The first line, whitespace collapsed, cut at a word near `max` with "…". */
function shortText(text: string, max = TARGET_MAX_CHARS): string {
  const firstLine = text.trim().split("\n", 1)[0]!.replace(/\s+/g, " ");
  const more = firstLine.length < text.trim().length;
  if (firstLine.length <= max) return more ? `${firstLine} …` : firstLine;
  const cut = firstLine.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/** A path cut from its start, so the file name stays: `…/core/write-queue.ts`. */
function shortPath(path: string, max = TARGET_MAX_CHARS): string {
  const flat = path.replace(/\s+/g, " ");
  if (flat.length <= max) return flat;
  const tail = flat.slice(flat.length - (max - 1));
  const slash = tail.indexOf("/");
  return `…${slash >= 0 && slash < tail.length - 1 ? tail.slice(slash) : tail}`;
}
