/**
 * How much of what requests could read from the cache the recording lost (cache-model.ts "Lost
 * caches"), measured on an as-run replay that assumes no loss, separately after a user's prompt
 * and within a tool loop. The share is in tokens (lost readable tokens over readable tokens),
 * since the provider lost the cache more often before long prompts. A recorded read under half
 * the modelled one counts as lost.
 */

import type { RecordedRequest, Recording } from "./recording.js";
import type { RequestFigures } from "./replay.js";

export interface LostShare {
  /** Requests of this kind that the model says could read the cache, and those the recording billed as a miss. */
  readable: number;
  lost: number;
  /** The tokens they could read, and those lost (what they could read less what was read). */
  readableTokens: number;
  lostTokens: number;
  /** lostTokens / readableTokens (0 when none could read). */
  share: number;
}

export interface LostCaches {
  afterUser: LostShare;
  inToolLoop: LostShare;
}

export function noLostCaches(): LostCaches {
  return { afterUser: emptyShare(), inToolLoop: emptyShare() };
}

/** The share that applies to a request. */
export function lostShareOf(lost: LostCaches, request: RecordedRequest): number {
  return (request.afterUser ? lost.afterUser : lost.inToolLoop).share;
}

export function lostCaches(recording: Recording, deterministic: readonly RequestFigures[]): LostCaches {
  const lost = noLostCaches();
  for (const request of recording.requests) {
    const modelled = deterministic[request.index]!.cacheRead;
    if (!request.billed || !request.recorded || modelled === 0) continue;
    const kind = request.afterUser ? lost.afterUser : lost.inToolLoop;
    kind.readable++;
    kind.readableTokens += modelled;
    if (request.tokens.cacheRead >= modelled / 2) continue;
    kind.lost++;
    kind.lostTokens += modelled - request.tokens.cacheRead;
  }
  for (const kind of [lost.afterUser, lost.inToolLoop]) kind.share = kind.readableTokens === 0 ? 0 : kind.lostTokens / kind.readableTokens;
  return lost;
}

function emptyShare(): LostShare {
  return { readable: 0, lost: 0, readableTokens: 0, lostTokens: 0, share: 0 };
}
