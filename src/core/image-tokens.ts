/**
 * What an image content part costs in the context, in tokens: the one rule every context measure
 * of chainpress uses (stats, the compact report, `/pruner status`, `/pruner compact`, the
 * open-chain policy). An image's base64 characters are never counted as text.
 *
 * - "pixels": where the header at the start of the data gives the image's size (PNG, JPEG, GIF,
 *   WebP), Anthropic's published rule: an image whose long edge exceeds 1568 px is first scaled
 *   down to that edge (aspect kept), then costs width × height / 750 tokens, rounded up, at most
 *   1600 (the provider scales larger images down until they fit). The cap is what makes a 4K
 *   screenshot cost what it is billed, not seven times more.
 * - "pi-estimate": otherwise (unknown format, truncated or garbage data), what pi's compaction
 *   estimate counts: 4,800 characters, i.e. 1,200 tokens at 4 characters a token
 *   (`estimateTokens` in pi-coding-agent's core/compaction/compaction.js, ESTIMATED_IMAGE_CHARS).
 *
 * Only the first IMAGE_HEAD_CHARS characters of the data are read, so a lightened image (whose
 * data keeps that head, core/light-value.ts) costs exactly what the real one does.
 */

import { CHARS_PER_TOKEN } from "./defaults.js";

/** Base64 characters of an image's data the header is read from (3,072 bytes). */
export const IMAGE_HEAD_CHARS = 4096;
/** pi's estimate of an image, in characters (its compaction's ESTIMATED_IMAGE_CHARS). */
export const PI_IMAGE_CHARS = 4800;
/** Long edge above which the provider scales an image down first. */
export const MAX_LONG_EDGE = 1568;
/** Pixels per token. */
export const PIXELS_PER_TOKEN = 750;
/** Most tokens one image costs once scaled down. */
export const MAX_IMAGE_TOKENS = 1600;

export type ImageRule = "pixels" | "pi-estimate";

export interface ImageCost {
  rule: ImageRule;
  tokens: number;
  /** The size read from the header ("pixels" only). */
  width?: number;
  height?: number;
}

/** The cost of an image whose base64 data is `data` (possibly lightened: only its head is read). */
export function imageCost(data: string): ImageCost {
  const size = imageSize(data);
  if (size === undefined) return { rule: "pi-estimate", tokens: PI_IMAGE_CHARS / CHARS_PER_TOKEN };
  return { rule: "pixels", tokens: pixelTokens(size.width, size.height), width: size.width, height: size.height };
}

/** The image's cost in context characters (tokens × CHARS_PER_TOKEN), what replaces its data in a measure. */
export function imageChars(cost: ImageCost): number {
  return cost.tokens * CHARS_PER_TOKEN;
}

/** Tokens of a `width` × `height` image by the provider's rule (see the module comment). */
export function pixelTokens(width: number, height: number): number {
  const scale = Math.min(1, MAX_LONG_EDGE / Math.max(width, height));
  const w = Math.max(1, Math.round(width * scale));
  const h = Math.max(1, Math.round(height * scale));
  return Math.min(MAX_IMAGE_TOKENS, Math.ceil((w * h) / PIXELS_PER_TOKEN));
}

export interface ImageSize {
  width: number;
  height: number;
}

/** Width and height from the header in the first IMAGE_HEAD_CHARS characters of base64 `data`, if it is a PNG, JPEG, GIF or WebP. */
export function imageSize(data: string): ImageSize | undefined {
  const head = decodeHead(data.slice(0, IMAGE_HEAD_CHARS));
  if (head === undefined) return undefined;
  const size = pngSize(head) ?? gifSize(head) ?? webpSize(head) ?? jpegSize(head);
  return size !== undefined && size.width > 0 && size.height > 0 ? size : undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of a base64 head (a partial last group is dropped); undefined when it is not base64. */
function decodeHead(head: string): Uint8Array | undefined {
  if (!BASE64.test(head)) return undefined;
  return Buffer.from(head.slice(0, head.length - (head.length % 4)), "base64");
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((byte, i) => bytes[at + i] === byte);
}

function ascii(text: string): number[] {
  return Array.from(text, (c) => c.charCodeAt(0));
}

const u16le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const u16be = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u24le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** PNG: the IHDR chunk first, width and height big-endian at bytes 16 and 20. */
function pngSize(b: Uint8Array): ImageSize | undefined {
  if (!startsWith(b, PNG) || !startsWith(b, ascii("IHDR"), 12) || b.length < 24) return undefined;
  return { width: u32be(b, 16), height: u32be(b, 20) };
}

/** GIF: the logical screen's width and height, little-endian at bytes 6 and 8. */
function gifSize(b: Uint8Array): ImageSize | undefined {
  if (!(startsWith(b, ascii("GIF87a")) || startsWith(b, ascii("GIF89a"))) || b.length < 10) return undefined;
  return { width: u16le(b, 6), height: u16le(b, 8) };
}

/** WebP: a RIFF file whose first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webpSize(b: Uint8Array): ImageSize | undefined {
  if (!startsWith(b, ascii("RIFF")) || !startsWith(b, ascii("WEBP"), 8)) return undefined;
  if (startsWith(b, ascii("VP8 "), 12) && startsWith(b, [0x9d, 0x01, 0x2a], 23) && b.length >= 30) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  if (startsWith(b, ascii("VP8L"), 12) && b[20] === 0x2f && b.length >= 25) {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (startsWith(b, ascii("VP8X"), 12) && b.length >= 30) return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  return undefined;
}

/** JPEG: the segments from SOI on, up to the first start-of-frame marker, which holds height then width. */
function jpegSize(b: Uint8Array): ImageSize | undefined {
  if (!startsWith(b, [0xff, 0xd8])) return undefined;
  let at = 2;
  while (at + 1 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    // Markers without a length: TEM and the restart markers.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (at + 4 > b.length) return undefined;
    if (isStartOfFrame(marker)) return at + 9 <= b.length ? { width: u16be(b, at + 7), height: u16be(b, at + 5) } : undefined;
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image, start of scan
    const length = u16be(b, at + 2);
    if (length < 2) return undefined;
    at += 2 + length;
  }
  return undefined;
}

/** SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}
