/** Defaults shared by every adapter; they equal pi-condense's so both tools agree on a session. */

/** Results whose JS length reaches this many UTF-16 units are written to a spill file. */
export const DEFAULT_SPILL_THRESHOLD = 65536;
/** UTF-8 bytes of a spilled result kept inline as its preview. */
export const DEFAULT_SPILL_PREVIEW_BYTES = 2048;
/** Closed chains kept uncompressed at the tail during a live flush: the chain just closed (upstream keeps 3; chosen by `npm run bench:policy`). */
export const DEFAULT_ROLLING_WINDOW = 1;
/** `/pruner compact` and `chainpress compact` compress every eligible chain. */
export const COMPACT_ROLLING_WINDOW = 0;
/** Chains holding a context_tree_query result younger than this many user turns are deferred. */
export const DEFAULT_RECOVERY_GRACE_TURNS = 3;
/** Tool outputs always shown verbatim, by tool name. */
export const DEFAULT_PROTECTED_TOOLS: readonly string[] = [];
/** Tool outputs always shown verbatim, by the `path` argument's glob. */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = ["**/skills/**/*.md"];
/** Characters per estimated token, as upstream estimates. */
export const CHARS_PER_TOKEN = 4;
