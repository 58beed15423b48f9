/** customType strings of the pi-condense session entries chainpress reads or writes. */

export const CUSTOM_TYPE_INDEX = "context-prune-index";
export const CUSTOM_TYPE_SUMMARY = "context-prune-summary";
export const CUSTOM_TYPE_CHAIN = "context-prune-chain";
export const CUSTOM_TYPE_DEDUP_ALIAS = "context-prune-dedup-alias";
export const CUSTOM_TYPE_DIAGNOSTIC = "context-prune-diagnostic";

/** Name of the recovery tool; its results drive the recovery-grace rule. */
export const QUERY_TOOL_NAME = "context_tree_query";
