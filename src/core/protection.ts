/**
 * Protection rule: outputs of protected tools, or of calls whose `path` argument matches a
 * protected glob, are never archived and are relocated verbatim when their chain is compressed.
 */

export interface ProtectionConfig {
  protectedTools: readonly string[];
  protectedPaths: readonly string[];
}

export type ProtectionPredicate = (toolName: string, args: unknown) => boolean;

/** Glob to anchored regex: `**` + `/` spans whole folders, `**` anything, `*` one segment, `?` one char. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "*" && glob[i + 1] === "*") {
      if (glob[i + 2] === "/") {
        out += "(?:[^/]*/)*";
        i += 2;
      } else {
        out += ".*";
        i += 1;
      }
    } else if (ch === "*") out += "[^/]*";
    else if (ch === "?") out += "[^/]";
    else out += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Paths whose verdict a predicate remembers. A session names the same few files again and again,
 * and every pass over its calls (chain detection, each render) asks about each of them.
 */
const REMEMBERED_PATHS = 4096;

/** Build the predicate once; the glob regexes are compiled a single time. */
export function makeProtectionPredicate(config: ProtectionConfig): ProtectionPredicate {
  const tools = new Set(config.protectedTools);
  const globs = config.protectedPaths.map(globToRegExp);
  const verdicts = new Map<string, boolean>();
  const pathMatches = (path: string): boolean => {
    let verdict = verdicts.get(path);
    if (verdict === undefined) {
      const normalized = path.replace(/\\/g, "/");
      verdict = globs.some((re) => re.test(normalized));
      if (verdicts.size < REMEMBERED_PATHS) verdicts.set(path, verdict);
    }
    return verdict;
  };
  return (toolName, args) => {
    if (tools.has(toolName)) return true;
    if (globs.length === 0 || typeof args !== "object" || args === null) return false;
    const path = (args as { path?: unknown }).path;
    return typeof path === "string" && pathMatches(path);
  };
}
