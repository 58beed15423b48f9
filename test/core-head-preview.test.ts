// Head preview (UPSTREAM-FORMAT.md §5): whole text when its UTF-8 encoding is ≤ N bytes; else cut at
// N bytes, move back over UTF-8 continuation bytes, then if the cut text has a "\n" at index > 0,
// drop everything from the LAST "\n" onward.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headPreview } from "../src/core/head-preview.js";

/** Independent implementation written straight from the reference text. */
function referencePreview(text: string, n: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= n) return text;
  let end = n;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  const cut = buf.subarray(0, end).toString("utf8");
  const nl = cut.lastIndexOf("\n");
  return nl > 0 ? cut.slice(0, nl) : cut;
}

const bytes = (s: string) => Buffer.byteLength(s, "utf8");
function isValidUtf8RoundTrip(s: string): boolean {
  return Buffer.from(s, "utf8").toString("utf8") === s && !/[\ud800-\udfff]/u.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ""));
}

describe("headPreview", () => {
  it("returns the whole text when it is small", () => {
    expect(headPreview("short\ntext", 2048)).toBe("short\ntext");
  });

  it("returns the whole text when it is exactly N bytes", () => {
    expect(headPreview("abcd", 4)).toBe("abcd");
    expect(headPreview("é€", 5)).toBe("é€"); // 2 + 3 bytes
  });

  it("cuts at the last line boundary inside the byte budget", () => {
    // First 14 bytes: "line1\nline2\nli" → drop from the last "\n".
    expect(headPreview("line1\nline2\nline3", 14)).toBe("line1\nline2");
  });

  it("a cut that ends exactly on a newline drops it", () => {
    // First 6 bytes: "line1\n" → last "\n" at 5 → "line1".
    expect(headPreview("line1\nline2", 6)).toBe("line1");
  });

  it("a newline only at index 0 is not a cut point (index must be > 0)", () => {
    expect(headPreview("\nabcdef", 4)).toBe("\nabc");
  });

  it("no newline → raw byte cut", () => {
    expect(headPreview("abcdefghij", 4)).toBe("abcd");
  });

  it("never splits a 3-byte character (€): moves back to the character start", () => {
    // a(1) €(3) €(3): 5 bytes land inside the second € → back to 4 bytes.
    expect(headPreview("a€€", 5)).toBe("a€");
  });

  it("never splits an emoji (4 bytes, surrogate pair in JS)", () => {
    expect(headPreview("😀😀", 6)).toBe("😀");
    expect(headPreview("😀😀", 3)).toBe("");
    expect(headPreview("x😀", 4)).toBe("x");
  });

  it("CJK: 漢字テスト at 7 bytes gives 漢字 (6 bytes)", () => {
    expect(headPreview("漢字テスト", 7)).toBe("漢字");
  });

  it("N = 0 on a non-empty text gives the empty string", () => {
    expect(headPreview("abc", 0)).toBe("");
  });

  it("long texts (far beyond N) are cut correctly", () => {
    const text = `${"x".repeat(10)}\n${"y".repeat(1_000_000)}`;
    expect(headPreview(text, 2048)).toBe("x".repeat(10));
  });

  it("property: ≤ N bytes, valid UTF-8, a prefix of the input, equal to the reference algorithm", () => {
    const alphabet = fc.constantFrom("a", "\n", "é", "€", "漢", "😀", "𝄞", " ");
    const text = fc.array(alphabet, { maxLength: 80 }).map((a) => a.join(""));
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 120 }), (t, n) => {
        const out = headPreview(t, n);
        expect(bytes(out)).toBeLessThanOrEqual(n);
        expect(t.startsWith(out)).toBe(true);
        expect(isValidUtf8RoundTrip(out)).toBe(true);
        expect(out).toBe(referencePreview(t, n));
      }),
      { numRuns: 2000 },
    );
  });

  it("property (full Unicode): result never contains U+FFFD unless the input does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), fc.integer({ min: 0, max: 100 }), (t, n) => {
        const out = headPreview(t, n);
        if (!t.includes("\ufffd")) expect(out.includes("\ufffd")).toBe(false);
        expect(out).toBe(referencePreview(t, n));
      }),
      { numRuns: 2000 },
    );
  });
});
