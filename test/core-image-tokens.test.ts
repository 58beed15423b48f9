// Issue 46 item 3: an image counts as billed. Its size comes from the header of real PNG, JPEG,
// GIF and WebP bytes (made in test/helpers/image-bytes.ts); anything else counts as pi estimates
// an image (4,800 characters, 1,200 tokens). A message's measure replaces the image's base64
// characters by that count.
import { describe, expect, it } from "vitest";
import { imageBillOf } from "../src/core/billed-size.js";
import { IMAGE_HEAD_CHARS, imageCost, imageSize, pixelTokens } from "../src/core/image-tokens.js";
import { lightenInPlace } from "../src/core/light-value.js";
import { realJsonLength } from "../src/core/light-placeholder.js";
import { gifBytes, jpegBytes, pngBytes, webpBytes } from "./helpers/image-bytes.js";

const b64 = (bytes: Buffer) => bytes.toString("base64");
const PI_ESTIMATE = { rule: "pi-estimate", tokens: 1200 };

describe("imageSize", () => {
  it("reads the size of PNG, GIF, JPEG and every WebP kind", () => {
    expect(imageSize(b64(pngBytes(1432, 346)))).toEqual({ width: 1432, height: 346 });
    expect(imageSize(b64(gifBytes(640, 480)))).toEqual({ width: 640, height: 480 });
    expect(imageSize(b64(jpegBytes(1920, 1080)))).toEqual({ width: 1920, height: 1080 });
    // An APP1 segment (EXIF) in front of the frame header, still within the head.
    expect(imageSize(b64(jpegBytes(800, 600, 0, 2000)))).toEqual({ width: 800, height: 600 });
    expect(imageSize(b64(webpBytes("VP8 ", 1024, 768)))).toEqual({ width: 1024, height: 768 });
    expect(imageSize(b64(webpBytes("VP8L", 300, 200)))).toEqual({ width: 300, height: 200 });
    expect(imageSize(b64(webpBytes("VP8X", 5000, 70000)))).toEqual({ width: 5000, height: 70000 });
  });

  it("gives nothing for truncated, garbage, unknown or zero-sized data", () => {
    const png = b64(pngBytes(100, 100));
    expect(imageSize(png.slice(0, 20))).toBeUndefined(); // cut inside IHDR
    expect(imageSize("")).toBeUndefined();
    expect(imageSize("not base64 at all!")).toBeUndefined();
    expect(imageSize(b64(Buffer.from("BM6\u0000 a bitmap, not a format that is read")))).toBeUndefined();
    expect(imageSize(b64(pngBytes(0, 10)))).toBeUndefined();
    expect(imageSize(b64(jpegBytes(640, 480)).slice(0, 40))).toBeUndefined(); // SOF cut off
  });

  it("reads only the first IMAGE_HEAD_CHARS characters: a JPEG whose frame header lies past them is not sized", () => {
    const far = b64(jpegBytes(640, 480, 0, 4000));
    expect(imageSize(far)).toBeUndefined();
    expect(imageCost(far)).toEqual(PI_ESTIMATE);
    // What follows the head changes nothing.
    const png = b64(pngBytes(10, 10, 20_000));
    expect(imageSize(png.slice(0, IMAGE_HEAD_CHARS) + "!!!garbage")).toEqual({ width: 10, height: 10 });
  });
});

describe("imageCost", () => {
  it("counts width × height / 750 tokens, rounded up, after scaling the long edge down to 1568 px, at most 1600", () => {
    expect(imageCost(b64(pngBytes(1432, 346)))).toEqual({ rule: "pixels", tokens: 661, width: 1432, height: 346 });
    expect(pixelTokens(750, 1)).toBe(1);
    expect(pixelTokens(751, 1)).toBe(2);
    expect(pixelTokens(1000, 1000)).toBe(1334);
    // 3136 × 400 is scaled to 1568 × 200.
    expect(pixelTokens(3136, 400)).toBe(Math.ceil((1568 * 200) / 750));
    // A 4K screenshot: scaled to 1568 × 882, 1,844 tokens, capped.
    expect(pixelTokens(3840, 2160)).toBe(1600);
  });

  it("counts pi's estimate, 1,200 tokens, where the header gives no size", () => {
    expect(imageCost("AAAA")).toEqual(PI_ESTIMATE);
    expect(imageCost(b64(pngBytes(100, 100)).slice(0, 30))).toEqual(PI_ESTIMATE);
  });
});

describe("imageBillOf", () => {
  const part = (data: string) => ({ type: "image", data, mimeType: "image/png" });

  it("replaces an image's base64 characters by its tokens × 4, and counts it by its rule", () => {
    const png = b64(pngBytes(1000, 1000, 60_000));
    const message = { role: "toolResult", content: [{ type: "text", text: "Read image file [image/png]" }, part(png), part("garbage!")] };
    const bill = imageBillOf(message);
    expect(bill.tally).toEqual({ count: 2, tokens: 1334 + 1200, byRule: { pixels: 1, "pi-estimate": 1 } });
    expect(bill.delta).toBe(1334 * 4 - JSON.stringify(png).length + 1200 * 4 - JSON.stringify("garbage!").length);
  });

  it("is nothing for a message without images, whatever its content", () => {
    for (const message of [{ role: "user", content: "text" }, { role: "assistant", content: [{ type: "text", text: "x" }] }, { role: "toolResult", content: [{ type: "image" }] }, null]) {
      expect(imageBillOf(message)).toEqual({ tally: { count: 0, tokens: 0, byRule: { pixels: 0, "pi-estimate": 0 } }, delta: 0 });
    }
  });

  it("gives the same bill for a lightened message, whose image data keeps only its head", () => {
    for (const data of [b64(pngBytes(1432, 346, 50_000)), b64(jpegBytes(1920, 1080, 50_000, 1500)), b64(jpegBytes(640, 480, 50_000, 4000)), b64(webpBytes("VP8X", 4000, 3000, 50_000)), "x".repeat(70_000)]) {
      const real = { role: "toolResult", content: [{ type: "text", text: "Read image file" }, part(data)] };
      const light = structuredClone(real);
      expect(lightenInPlace(light)).toBe(JSON.stringify(real).length);
      const lightData = (light.content[1] as { data: string }).data;
      expect(lightData.length).toBeLessThan(IMAGE_HEAD_CHARS + 20);
      expect(realJsonLength(light)).toBe(JSON.stringify(real).length);
      expect(imageBillOf(light)).toEqual(imageBillOf(real));
    }
  });
});
