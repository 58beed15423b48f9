/**
 * A compression's figures. At the request where a policy rewrites its context from message P on:
 * the rewrite costs writing the rewritten part instead of reading what it replaces
 * (rewritten × write price − replaced × read price; the messages the conversation appended since
 * the request before are written either way), and saves, on each later request, reading the
 * difference (saved tokens × read price, as if the cache stays warm). It pays back after
 * ceil(cost / saving) later requests; it stops counting when a later rewrite starts at or before P
 * (another compression, or a compaction) or the session ends.
 */

import type { TokenPrices } from "./prices.js";

export interface CompressionFigures {
  /** The request whose context first shows it. */
  request: number;
  chains: number;
  /** Tokens before its first changed message (the prefix still read from the cache). */
  keptTokens: number;
  /** Tokens it replaced, and what replaced them. */
  replacedTokens: number;
  rewrittenTokens: number;
  /** Dollars: the extra the rewrite cost at its request (negative when it saves at once). */
  rewriteCost: number;
  /** Dollars saved on each later request. */
  savingPerRequest: number;
  /** Later requests until the saving exceeds the rewrite; null when it never can (no saving). */
  paybackRequests: number | null;
  /** Billed requests after it while it still held. */
  laterRequests: number;
  paidBack: boolean;
}

export interface RewriteAt {
  request: number;
  chains: number;
  /** Billed requests before it (its position among billed requests). */
  billedBefore: number;
  /** Messages kept from the previous context, and their tokens. */
  keptMessages: number;
  keptTokens: number;
  /** Tokens of the previous context after the kept prefix, and of this one. */
  previousRest: number;
  rest: number;
  /** Tokens the conversation itself appended since the previous request. */
  grown: number;
  prices: TokenPrices;
}

/** Follows compression events through a replay: open ones close when a rewrite reaches them. */
export class CompressionLedger {
  private readonly open: { figures: CompressionFigures; keptMessages: number; billedBefore: number }[] = [];
  readonly closed: CompressionFigures[] = [];

  /** A rewrite at a billed request: it closes the events at or after its start; a compression opens one. */
  rewrite(at: RewriteAt): void {
    this.closeFrom(at.keptMessages, at.billedBefore);
    if (at.chains === 0) return;
    const rewritten = Math.max(0, at.rest - at.grown);
    const saved = at.previousRest - rewritten;
    const rewriteCost = rewritten * at.prices.cacheWrite - at.previousRest * at.prices.cacheRead;
    const savingPerRequest = saved * at.prices.cacheRead;
    const paybackRequests = rewriteCost <= 0 ? 0 : savingPerRequest > 0 ? Math.ceil(rewriteCost / savingPerRequest) : null;
    const figures: CompressionFigures = { request: at.request, chains: at.chains, keptTokens: at.keptTokens, replacedTokens: at.previousRest, rewrittenTokens: rewritten, rewriteCost, savingPerRequest, paybackRequests, laterRequests: 0, paidBack: false };
    this.open.push({ figures, keptMessages: at.keptMessages, billedBefore: at.billedBefore });
  }

  /** The replay ended after `billed` billed requests. */
  finish(billed: number): CompressionFigures[] {
    this.closeFrom(0, billed);
    return this.closed.sort((a, b) => a.request - b.request);
  }

  private closeFrom(keptMessages: number, billedBefore: number): void {
    while (this.open.length > 0 && this.open[this.open.length - 1]!.keptMessages >= keptMessages) {
      const event = this.open.pop()!;
      const f = event.figures;
      f.laterRequests = billedBefore - event.billedBefore - 1;
      f.paidBack = f.paybackRequests !== null && f.laterRequests >= f.paybackRequests;
      this.closed.push(f);
    }
  }
}
