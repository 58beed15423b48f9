/** customType strings of pi-condense's session entries; chainpress reads and writes the same ones. */

export const CUSTOM_TYPE_INDEX = "context-prune-index";
export const CUSTOM_TYPE_SUMMARY = "context-prune-summary";
export const CUSTOM_TYPE_CHAIN = "context-prune-chain";
export const CUSTOM_TYPE_DEDUP_ALIAS = "context-prune-dedup-alias";
export const CUSTOM_TYPE_DIAGNOSTIC = "context-prune-diagnostic";
export const CUSTOM_TYPE_FLUSH_METRICS = "context-prune-flush-metrics";
export const CUSTOM_TYPE_FRONTIER = "context-prune-frontier";
export const CUSTOM_TYPE_STATS = "context-prune-stats";

/** Name of the recovery tool; its results drive the recovery-grace rule. */
export const QUERY_TOOL_NAME = "context_tree_query";
