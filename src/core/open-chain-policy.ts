/**
 * When and what to archive from a chain that is still running (issue 13). A long autonomous run
 * never closes its chain, so closed-chain compression never reaches it; this policy picks older
 * outputs of the open chain to archive (their stubs then replace them in the context), in the
 * spirit of Anthropic's `clear_tool_uses` (trigger, keep, clear-at-least). Pure.
 *
 * Every archiving step rewrites the context from the first newly stubbed output on, so the
 * provider's prompt cache is written again from there (~12.5× the price of reading it). The
 * trigger and the minimum reclaim keep such steps rare and each one worth its rewrite; the
 * README's "Open chains" section has the arithmetic behind the defaults.
 */

import { imageBillOf } from "./billed-size.js";
import { CHARS_PER_TOKEN } from "./defaults.js";
import { realJsonLength } from "./light-placeholder.js";

export interface OpenChainSettings {
  /** Archive older outputs of the running chain at all. */
  enabled: boolean;
  /** Act once the open chain's unarchived outputs outside the keep window exceed this many tokens. */
  triggerTokens: number;
  /** The newest N tool results of the open chain always stay verbatim. */
  keepRecent: number;
  /** A step must reclaim at least this many tokens (output minus its stub), or nothing is archived. */
  minReclaimTokens: number;
}

export const DEFAULT_OPEN_CHAIN_SETTINGS: OpenChainSettings = {
  enabled: true,
  triggerTokens: 40_000,
  keepRecent: 10,
  minReclaimTokens: 20_000,
};

/** What an output of the open chain is, as far as archiving goes. */
export type OpenOutputStatus =
  /** Can be archived now. */
  | "archivable"
  /** Already archived by an earlier step (its stub is in the context). */
  | "archived"
  /** A protected tool or path: never archived. */
  | "protected"
  /** A recent context_tree_query result: the model asked for it, it stays. */
  | "grace";

export interface OpenOutput {
  /** Occurrence key. */
  key: string;
  status: OpenOutputStatus;
  /** Estimated tokens of the output as it is in the context now. */
  tokens: number;
  /** Estimated tokens of the stub that would replace it. */
  stubTokens: number;
}

export interface OpenChainDecision {
  /** Occurrence keys to archive, in chain order (empty: do nothing). */
  keys: string[];
  /** Why nothing, or "archive". */
  reason: "disabled" | "below-trigger" | "below-min-reclaim" | "archive";
  /** Unarchived output tokens outside the keep window (what the trigger compares). */
  outsideTokens: number;
  /** Tokens the chosen keys reclaim (outputs minus their stubs). */
  reclaimTokens: number;
}

/**
 * Estimated tokens of a tool output as it is in the context: its text (estimateTokens) and its
 * image parts as billed (core/billed-size.ts), the count every context measure uses.
 */
export function estimateOutputTokens(text: string, content: unknown, textTokens: number = estimateTokens(text)): number {
  return textTokens + imageBillOf({ content }).tally.tokens;
}

/** Estimated tokens of a text (possibly lightened: placeholders count what they stand for). */
export function estimateTokens(text: string): number {
  const chars = Math.max(0, realJsonLength(text) - 2);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Decide one step for the open chain's outputs, given in chain order. The keep window is the
 * newest `keepRecent` outputs whatever their status; outside it, every archivable output whose
 * stub is smaller than itself is taken at once (taking all of them, not just enough to get under
 * the trigger, makes the next rewrite as far away as possible).
 */
export function decideOpenChain(outputs: readonly OpenOutput[], settings: OpenChainSettings): OpenChainDecision {
  if (!settings.enabled) return { keys: [], reason: "disabled", outsideTokens: 0, reclaimTokens: 0 };
  const outside = outputs.slice(0, Math.max(0, outputs.length - Math.max(0, settings.keepRecent)));
  let outsideTokens = 0;
  for (const output of outside) if (output.status !== "archived") outsideTokens += output.tokens;
  if (!(outsideTokens > settings.triggerTokens)) return { keys: [], reason: "below-trigger", outsideTokens, reclaimTokens: 0 };
  const chosen = outside.filter((output) => output.status === "archivable" && output.tokens > output.stubTokens);
  const reclaimTokens = chosen.reduce((sum, output) => sum + output.tokens - output.stubTokens, 0);
  if (reclaimTokens === 0 || reclaimTokens < settings.minReclaimTokens) return { keys: [], reason: "below-min-reclaim", outsideTokens, reclaimTokens };
  return { keys: chosen.map((output) => output.key), reason: "archive", outsideTokens, reclaimTokens };
}
