/**
 * A message's size in the context as billed: its JSON characters, with each image part's `data`
 * (its base64 string, quotes included) counted as the image's cost (core/image-tokens.ts) instead
 * of as text. A message without images keeps its JSON length exactly. Works on lightened messages
 * too: a lightened image keeps its data's head, and placeholders count what they stand for.
 */

import { digitGroups } from "./digit-groups.js";
import { imageChars, imageCost, type ImageRule } from "./image-tokens.js";
import { realJsonLength } from "./light-placeholder.js";

/** The images a measure met, and by which rule each was counted. */
export interface ImageTally {
  /** Image parts counted. */
  count: number;
  /** Their tokens together. */
  tokens: number;
  /** How many were counted by each rule: "pixels" (the header gave a size) or "pi-estimate". */
  byRule: Record<ImageRule, number>;
}

export function emptyTally(): ImageTally {
  return { count: 0, tokens: 0, byRule: { pixels: 0, "pi-estimate": 0 } };
}

export function addTally(into: ImageTally, from: ImageTally, times = 1): void {
  into.count += times * from.count;
  into.tokens += times * from.tokens;
  into.byRule.pixels += times * from.byRule.pixels;
  into.byRule["pi-estimate"] += times * from.byRule["pi-estimate"];
}

/** A message's images and how its measure differs from its JSON length (0 and an empty tally for most). */
export interface ImageBill {
  tally: ImageTally;
  /** Billed characters minus JSON characters. */
  delta: number;
}

/** Shared by every message without images: never written to. */
const NO_IMAGES: ImageBill = { tally: emptyTally(), delta: 0 };

/** The image parts of a message's `content` (user, tool result, custom message), as billed. */
export function imageBillOf(message: unknown): ImageBill {
  const content = (message as { content?: unknown } | null)?.content;
  return Array.isArray(content) ? imageBillOfParts(content) : NO_IMAGES;
}

/** The same for a list of content parts. */
export function imageBillOfParts(parts: readonly unknown[]): ImageBill {
  let bill: ImageBill | undefined;
  for (const part of parts) {
    const data = imageData(part);
    if (data === undefined) continue;
    bill ??= { tally: emptyTally(), delta: 0 };
    const cost = imageCost(data);
    bill.tally.count++;
    bill.tally.byRule[cost.rule]++;
    bill.tally.tokens += cost.tokens;
    bill.delta += imageChars(cost) - realJsonLength(data);
  }
  return bill ?? NO_IMAGES;
}

/** An image part's data string, or undefined for any other part. */
function imageData(part: unknown): string | undefined {
  if (typeof part !== "object" || part === null) return undefined;
  const { type, data } = part as { type?: unknown; data?: unknown };
  return type === "image" && typeof data === "string" ? data : undefined;
}

/** A report's sentence for the images it counted, or "" when there were none. */
export function imageTallyText(tally: ImageTally): string {
  if (tally.count === 0) return "";
  const { pixels, "pi-estimate": estimated } = tally.byRule;
  const by = [pixels > 0 ? `${pixels} by pixel size` : "", estimated > 0 ? `${estimated} at pi's estimate` : ""].filter(Boolean).join(", ");
  return `${tally.count} image${tally.count === 1 ? "" : "s"} as ~${digitGroups(tally.tokens)} tokens (${by})`;
}
