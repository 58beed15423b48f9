/**
 * What a query says and gives of an archived output's non-text parts (core/archived-parts.ts).
 * context_tree_query attaches image parts after its text, as pi's `read` returns an image, within
 * a budget per call; every part is listed in the output's block with what became of it, numbered
 * as `chainpress query --parts` numbers its files. Pages (`offset`) are the text only. Pure.
 */

import { base64DecodedBytes, isImageFacts, partData, partFacts, type ArchivedPart, type PartFacts } from "./archived-parts.js";
import { digitGroups } from "./digit-groups.js";
import { imageSize, MAX_IMAGE_TOKENS, type ImageSize } from "./image-tokens.js";
import { jsonText } from "./json-text.js";
import { QUERY_MAX_BYTES } from "./output-pages.js";

/**
 * Images one call attaches at most: each costs at most MAX_IMAGE_TOKENS (1,600) once the provider
 * scales it, so 8 cost at most what a page of text does (QUERY_MAX_BYTES, 51,200 bytes, at four
 * characters a token: 12,800 tokens). pi's `read` attaches one image per call.
 */
export const MAX_IMAGES_PER_CALL = Math.floor(QUERY_MAX_BYTES / 4 / MAX_IMAGE_TOKENS);
/**
 * Base64 characters one call attaches at most: what pi's `read` lets one image be (its
 * image-resize `DEFAULT_MAX_BYTES`, 4.5 MiB, kept under Anthropic's 5 MB per image), so every
 * image pi's `read` could have returned fits a call, and no call carries more than one such image.
 */
export const MAX_IMAGE_CHARS_PER_CALL = 4.5 * 1024 * 1024;

/** What is left of a call's image budget; spent in call order (refs, then content order). */
export interface ImageBudget {
  images: number;
  chars: number;
}

export function fullImageBudget(): ImageBudget {
  return { images: MAX_IMAGES_PER_CALL, chars: MAX_IMAGE_CHARS_PER_CALL };
}

/** pi's image content, as a tool result holds it. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/** True for a part the tool can attach, by its facts: an image with base64 data and a mime type. */
export function isAttachableFacts(facts: PartFacts): boolean {
  return isImageFacts(facts) && facts.mimeType !== undefined && facts.dataChars !== undefined;
}

/** The image content of a part read back, or undefined when it is not an attachable image. */
export function imageContentOf(part: unknown, facts: PartFacts): ImageContent | undefined {
  if (!isAttachableFacts(facts)) return undefined;
  const { data } = part as { data: string };
  return { type: "image", data, mimeType: facts.mimeType! };
}

/** Whether an image of `chars` base64 characters fits what is left of the budget. */
export function budgetFit(budget: ImageBudget, chars: number): "fits" | "over-budget" | "too-large" {
  if (chars > MAX_IMAGE_CHARS_PER_CALL) return "too-large";
  return budget.images > 0 && chars <= budget.chars ? "fits" : "over-budget";
}

export function spend(budget: ImageBudget, chars: number): void {
  budget.images -= 1;
  budget.chars -= chars;
}

/** What became of one part in a query. */
export type PartFate =
  /** Attached after the text, as the `image`th image of the tool result (from 1). */
  | { kind: "attached"; image: number }
  /** An image the call's budget had no room left for: another call can get it. */
  | { kind: "over-budget" }
  /** An image larger than any call's budget. */
  | { kind: "too-large" }
  /** Not an image the tool can attach (another kind, or an image without data or mime type). */
  | { kind: "kept" }
  /** Its spill file could not be read back (missing, refused, damaged): why. */
  | { kind: "unavailable"; reason: string; detail: string };

/** One part as a query lists it. */
export interface PartLine {
  /** 1-based among the output's non-text parts, in content order: `--parts`' file number. */
  n: number;
  /** Its index in the output's content. */
  at: number;
  facts: PartFacts;
  /** Its size: an image's decoded data, else its JSON text's UTF-8 bytes. */
  bytes: number;
  /** Width and height, where the part was at hand and its header gives them. */
  size?: ImageSize;
  fate: PartFate;
}

/** A part's size in bytes (see PartLine.bytes), from its record alone. */
export function partBytes(archived: ArchivedPart): number {
  const facts = partFacts(archived);
  if (isImageFacts(facts) && facts.dataChars !== undefined) return base64DecodedBytes(facts.dataChars);
  return archived.kind === "spilled" ? archived.spillBytes : Buffer.byteLength(jsonText(archived.part) ?? "", "utf8");
}

/** The line of a part whose content is `part` when at hand (an inline part, or one read back). */
export function partLine(n: number, archived: ArchivedPart, fate: PartFate, part?: unknown): PartLine {
  const facts = partFacts(archived);
  const line: PartLine = { n, at: archived.at, facts, bytes: partBytes(archived), fate };
  const data = partData(part);
  const size = isImageFacts(facts) && data !== undefined ? imageSize(data) : undefined;
  if (size !== undefined) line.size = size;
  return line;
}

/** What the part is, in a few words. */
export function partDescription(line: Pick<PartLine, "facts" | "bytes" | "size">): string {
  const { facts } = line;
  if (isImageFacts(facts)) {
    const details = [facts.mimeType ?? "no mime type", ...(line.size ? [`${line.size.width}x${line.size.height}`] : []), `${digitGroups(line.bytes)} bytes`];
    return `image (${details.join(", ")})`;
  }
  const kind = facts.type === "" ? "a part without a type" : `a part of type ${JSON.stringify(facts.type)}`;
  return `${kind} (${digitGroups(line.bytes)} bytes of JSON)`;
}

function fateText(fate: PartFate, facts: PartFacts, filesHint: string): string {
  switch (fate.kind) {
    case "attached":
      return `attached after the text, as image ${fate.image} of this result`;
    case "over-budget":
      return "left out: this call's image budget is spent";
    case "too-large":
      return `left out: larger than any call may attach (${digitGroups(MAX_IMAGE_CHARS_PER_CALL)} base64 characters); ${filesHint}`;
    case "kept":
      return `${isImageFacts(facts) ? "not attached: it holds no base64 data with a mime type" : "not an image, so not attached"}; ${filesHint}`;
    case "unavailable":
      return `unavailable (${fate.reason}): ${fate.detail}`;
  }
}

/** `--parts`' hint for the model: the command writes every part to a file. */
function partsFilesHint(label: string): string {
  return `\`chainpress query <session> ${label} --parts DIR\` writes it to a file`;
}

/**
 * The lines a block shows under its header for an output with non-text parts; none for an
 * output without. `label` is the block's ref, which a call with `parts` names.
 */
export function partsSection(label: string, lines: readonly PartLine[], total: number): string[] {
  if (total === 0) return [];
  const asked = lines.length === total ? "" : `; ${lines.length} asked for`;
  const out = [`Parts: ${total} besides the text, in content order${asked} (images are attached after the text; pages hold the text only)`];
  for (const line of lines) {
    const fate = fateText(line.fate, line.facts, partsFilesHint(label));
    out.push(`- part ${line.n}, content[${line.at}]: ${partDescription(line)}: ${fate}`);
  }
  const left = lines.filter((line) => line.fate.kind === "over-budget").map((line) => line.n);
  if (left.length > 0) {
    const budget = `a call attaches at most ${MAX_IMAGES_PER_CALL} images, ${digitGroups(MAX_IMAGE_CHARS_PER_CALL)} base64 characters`;
    out.push(`Left out (${budget}): part${left.length === 1 ? "" : "s"} ${left.join(", ")}; read ${left.length === 1 ? "it" : "them"} with ${partsHint(label, left)}`);
  }
  return out;
}

/** The call that reads given parts of one output. */
export function partsHint(label: string, parts: readonly number[]): string {
  return `context_tree_query ${JSON.stringify({ toolCallIds: [label], parts })}`;
}
