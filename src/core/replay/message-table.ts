/**
 * The messages a replay meets, each under one numeric identity, with its size in characters as
 * billed (core/billed-size.ts: JSON length, an image as its billed tokens × 4) and its tokens.
 * A branch entry's own message object is known by identity; any other message (a compaction
 * summary, a custom message, an edited message, a policy's rewrite) by its JSON text, so the same
 * derived message made twice is one identity. Tokens are calibrated on the recording
 * (calibrate.ts) or, for a message never calibrated, estimated as pi does: ceil(chars / 4).
 */

import { imageBillOf } from "../billed-size.js";
import { CHARS_PER_TOKEN } from "../defaults.js";
import type { AgentMessage } from "../session-types.js";

/** How a message's tokens were found. */
export type TokenSource = "calibrated" | "estimated";

export class MessageTable {
  private readonly byObject = new Map<object, number>();
  private readonly byText = new Map<string, number>();
  private readonly charCounts: number[] = [];
  /** Calibrated tokens by id; NaN where none (then the estimate counts). */
  private readonly calibrated: number[] = [];

  /** Messages known. */
  get size(): number {
    return this.charCounts.length;
  }

  /** The identity of a branch entry's own message object (first seen: sized now). */
  idOfOwn(message: AgentMessage): number {
    const known = this.byObject.get(message);
    if (known !== undefined) return known;
    const id = this.add(JSON.stringify(message).length + imageBillOf(message).delta);
    this.byObject.set(message, id);
    return id;
  }

  /** The identity of a message that is not a branch entry's own object: by its JSON text. */
  idOfDerived(message: AgentMessage): number {
    const text = JSON.stringify(message);
    const known = this.byText.get(text);
    if (known !== undefined) return known;
    const id = this.add(text.length + imageBillOf(message).delta);
    this.byText.set(text, id);
    return id;
  }

  /** Any message: an object seen before keeps its identity, else it is known by its JSON text. */
  idOf(message: AgentMessage): number {
    return this.byObject.get(message) ?? this.idOfDerived(message);
  }

  /** The billed characters of a branch entry's own message object, if it is one. */
  charsOfOwn(message: AgentMessage): number | undefined {
    const id = this.byObject.get(message);
    return id === undefined ? undefined : this.charCounts[id];
  }

  charsOf(id: number): number {
    return this.charCounts[id]!;
  }

  hasCalibrated(id: number): boolean {
    return !Number.isNaN(this.calibrated[id]!);
  }

  /** Sets a message's calibrated tokens (calibrate.ts only). */
  calibrate(id: number, tokens: number): void {
    this.calibrated[id] = tokens;
  }

  /** The message's tokens: calibrated, else estimated. */
  tokensOf(id: number): number {
    const tokens = this.calibrated[id]!;
    return Number.isNaN(tokens) ? estimateTokens(this.charCounts[id]!) : tokens;
  }

  sourceOf(id: number): TokenSource {
    return this.hasCalibrated(id) ? "calibrated" : "estimated";
  }

  private add(chars: number): number {
    this.charCounts.push(chars);
    this.calibrated.push(Number.NaN);
    return this.charCounts.length - 1;
  }
}

/** pi's estimate: characters / 4, rounded up. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
