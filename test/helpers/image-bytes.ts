/**
 * Real image files, made byte by byte: a PNG that decodes (CRCs, zlib data), and GIF, JPEG and
 * WebP files whose headers are what their formats specify (the pixel data after them is filler).
 * `filler` bytes make the data long, as a real screenshot's is. A seeded generator: the same
 * arguments give the same bytes.
 */

import zlib from "node:zlib";

function noise(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function u32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  return Buffer.concat([u32be(data.length), body, u32be(zlib.crc32(body))]);
}

/** A valid PNG, width × height grey pixels, plus `filler` bytes of noise in a private ancillary chunk. */
export function pngBytes(width: number, height: number, filler = 0, seed = 1): Buffer {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 0, 0, 0, 0])]); // 8-bit greyscale
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  for (let y = 0; y < height; y++) rows[y * (width + 1)] = 0; // filter: none
  const chunks = [pngChunk("IHDR", ihdr)];
  if (filler > 0) chunks.push(pngChunk("fiLl", noise(filler, seed)));
  chunks.push(pngChunk("IDAT", zlib.deflateSync(rows)), pngChunk("IEND", Buffer.alloc(0)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks]);
}

/** GIF89a: header, logical screen, one image descriptor, then filler. */
export function gifBytes(width: number, height: number, filler = 0, seed = 2): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  const descriptor = Buffer.alloc(10);
  descriptor[0] = 0x2c;
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  return Buffer.concat([Buffer.from("GIF89a", "ascii"), screen, descriptor, noise(filler, seed), Buffer.from([0x3b])]);
}

function jpegSegment(marker: number, data: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/**
 * A baseline JPEG's segments: SOI, APP0 (JFIF), `app1` bytes of an APP1 segment (EXIF-like
 * metadata, which puts the frame header further in), DQT, SOF0 with the size, SOS, filler, EOI.
 */
export function jpegBytes(width: number, height: number, filler = 0, app1 = 0, seed = 3): Buffer {
  const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  const sof = Buffer.alloc(15);
  sof[0] = 8;
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  sof[5] = 3;
  for (let c = 0; c < 3; c++) sof.set([c + 1, 0x11, 0], 6 + c * 3);
  const segments = [Buffer.from([0xff, 0xd8]), jpegSegment(0xe0, jfif)];
  // An APP1 segment holds at most 65,533 bytes: more is split into several.
  for (let left = app1; left > 0; left -= 65533) segments.push(jpegSegment(0xe1, noise(Math.min(left, 65533), seed)));
  segments.push(jpegSegment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])), jpegSegment(0xc0, sof));
  segments.push(jpegSegment(0xda, Buffer.from([3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0])), noise(filler, seed + 1).map((b) => (b === 0xff ? 0 : b)), Buffer.from([0xff, 0xd9]));
  return Buffer.concat(segments);
}

function riff(chunk: string, data: Buffer, filler: number, seed: number): Buffer {
  const body = Buffer.concat([Buffer.from("WEBP", "ascii"), Buffer.from(chunk, "ascii"), Buffer.alloc(4), data, noise(filler, seed)]);
  body.writeUInt32LE(data.length + filler, 8);
  const head = Buffer.concat([Buffer.from("RIFF", "ascii"), Buffer.alloc(4)]);
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

/** WebP, lossy (VP8), lossless (VP8L) or extended (VP8X) header. */
export function webpBytes(kind: "VP8 " | "VP8L" | "VP8X", width: number, height: number, filler = 0, seed = 4): Buffer {
  if (kind === "VP8 ") {
    const frame = Buffer.alloc(10);
    frame.set([0x9d, 0x01, 0x2a], 3); // after the 3-byte frame tag, the start code
    frame.writeUInt16LE(width, 6);
    frame.writeUInt16LE(height, 8);
    return riff(kind, frame, filler, seed);
  }
  if (kind === "VP8L") {
    const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14);
    const header = Buffer.alloc(5);
    header[0] = 0x2f;
    header.writeUInt32LE(bits >>> 0, 1);
    return riff(kind, header, filler, seed);
  }
  const header = Buffer.alloc(10);
  header.writeUIntLE(width - 1, 4, 3);
  header.writeUIntLE(height - 1, 7, 3);
  return riff(kind, header, filler, seed);
}
