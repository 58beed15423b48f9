/**
 * chainpress's library API: what another pi extension's flush path needs to compress closed
 * chains with chainpress's worker-threaded compressor instead of its own serial one, in the
 * pi-condense format. A typical flush: reconstructState(branch) once per session, then per flush
 * detectChains(withClosingMessage(messages, closing)) → compressEligible({..., runner}) with a
 * runner from createChainRunner(n); pruneMessages(messages, state) on every `context` event.
 * Re-exports only.
 */

// Orchestration (main thread + worker pool).
export { compressEligible, COMMIT_GROUP_SIZE } from "./main/compress-eligible.js";
export type { ChainProgress, ChainSource, CompressEligibleDeps, CompressEligibleResult } from "./main/compress-eligible.js";
export { createChainRunner } from "./main/chain-runner.js";
export type { ChainRunner } from "./main/chain-runner.js";
export { DiagnosticSink } from "./main/diagnostic-sink.js";
export type { AppendEntry } from "./main/append-entry.js";
export type { SpillSettings } from "./workers/chain-task.js";
export { spillModesFor } from "./io/write-spill.js";

// State: rebuilt from the branch, changed only by compressEligible's commits.
export { reconstructState, summaryRefs } from "./core/reconstruct.js";
export type { ReconstructResult, ReconstructWarning } from "./core/reconstruct.js";
export { PruneState } from "./core/prune-state.js";

// Detection and eligibility.
export { detectChains, withClosingMessage } from "./core/detect-chains.js";
export { compressionCandidates, recoveryGraceKeys, selectEligible } from "./core/select-eligible.js";
export { globToRegExp, makeProtectionPredicate } from "./core/protection.js";
export type { ProtectionConfig, ProtectionPredicate } from "./core/protection.js";

// Rendering (the `context` event).
export { pruneMessages } from "./core/render/prune-messages.js";
export type { PruneOptions, PruneResult } from "./core/render/prune-messages.js";

// Recovery (`context_tree_query`).
export { findRecords, formatQueryResult, queryDetails, truncatedBody } from "./core/query.js";
export type { QueryMatch } from "./core/query.js";
export { readSpilledBody, resolveRecordBody } from "./io/read-spill.js";
export type { SpillReadResult } from "./io/read-spill.js";
export { loadHasher } from "./core/digest.js";
export type { Hasher } from "./core/digest.js";

// Session shapes and helpers.
export { branchMessages, buildBranch, contextMessages } from "./core/session-tree.js";
export { blobDirFor } from "./core/spill-layout.js";
export { occurrenceKey, parseOccurrenceKey } from "./core/occurrence-key.js";
export * from "./core/custom-types.js";
export * from "./core/defaults.js";
export type {
  ChainCompressionEntry,
  ChainRange,
  ChainSkip,
  DiagnosticKind,
  DiagnosticReport,
  IndexEntryData,
  SummaryToolCallRef,
  ToolCallRecord,
} from "./core/prune-types.js";
export type { AgentMessage, SessionEntry, ToolResultMessage } from "./core/session-types.js";
export type { ChainpressSettings } from "./core/settings.js";
