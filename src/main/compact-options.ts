/** Settings of one compaction, with pi-condense's defaults. */

import {
  COMPACT_ROLLING_WINDOW,
  DEFAULT_PROTECTED_PATHS,
  DEFAULT_PROTECTED_TOOLS,
  DEFAULT_RECOVERY_GRACE_TURNS,
  DEFAULT_SPILL_PREVIEW_BYTES,
  DEFAULT_SPILL_THRESHOLD,
} from "../core/defaults.js";
import { DEFAULT_OPEN_CHAIN_SETTINGS, type OpenChainSettings } from "../core/open-chain-policy.js";
import type { ShrinkRender } from "./plan-shrink.js";
import { SMALL_CHAIN_BYTES } from "./small-session.js";

export interface CompactOptions {
  /** Newest closed chains kept as they are (0 = `/pruner compact`). */
  rollingWindow: number;
  protectedTools: readonly string[];
  protectedPaths: readonly string[];
  spillThreshold: number;
  spillPreviewBytes: number;
  recoveryGraceTurns: number;
  /** Compute everything, write nothing to the session or its blob folder. */
  dryRun: boolean;
  /** Drop an incomplete last line (a crashed writer) before appending; the caller keeps a backup. */
  dropTruncatedTail: boolean;
  /** Also compact chains wholly behind pi's latest compaction (core/compaction-visibility.ts); cut ones never. */
  includeCompacted: boolean;
  /** Archiving older outputs of a chain still open at the end of the session (issue 13). */
  openChains: OpenChainSettings;
  /** Refuse (SessionFileError "joined-entries") a version-3 file with glued entries, so the caller can split them first. */
  refuseJoinedLines: boolean;
  /** How the context will be rendered, for the check that a chain's compression shrinks it (default: the render's defaults). */
  render: ShrinkRender;
  /** With a pool, chains whose lines in the session file are fewer bytes than this run on the calling thread (0: none do). */
  inlineChainBytes: number;
}

export const DEFAULT_COMPACT_OPTIONS: CompactOptions = {
  rollingWindow: COMPACT_ROLLING_WINDOW,
  protectedTools: DEFAULT_PROTECTED_TOOLS,
  protectedPaths: DEFAULT_PROTECTED_PATHS,
  spillThreshold: DEFAULT_SPILL_THRESHOLD,
  spillPreviewBytes: DEFAULT_SPILL_PREVIEW_BYTES,
  recoveryGraceTurns: DEFAULT_RECOVERY_GRACE_TURNS,
  dryRun: false,
  dropTruncatedTail: false,
  includeCompacted: false,
  refuseJoinedLines: false,
  openChains: DEFAULT_OPEN_CHAIN_SETTINGS,
  render: {},
  inlineChainBytes: SMALL_CHAIN_BYTES,
};
