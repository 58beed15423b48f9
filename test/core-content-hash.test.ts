// Dedup content hash (UPSTREAM-FORMAT.md §3.2): SHA-1 hex of toolName bytes, one NUL byte, then the
// normalised text (CRLF → LF; per line strip [ \t]+$; rejoin; JS trim()).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { contentHash, normalizeResultText } from "../src/core/content-hash.js";

/** Independent SHA-1 over explicit bytes: name, 0x00, already-normalised text. */
function sha1Of(name: string, normalized: string): string {
  return createHash("sha1").update(Buffer.concat([Buffer.from(name, "utf8"), Buffer.from([0]), Buffer.from(normalized, "utf8")])).digest("hex");
}

describe("contentHash", () => {
  it("matches an independently computed sha1(name \\0 normalized)", () => {
    expect(contentHash("bash", "hello\nworld")).toBe(sha1Of("bash", "hello\nworld"));
  });

  it("hashes the normalised text, not the raw text", () => {
    expect(contentHash("bash", "  hello  \r\nworld\t\n\n")).toBe(sha1Of("bash", "hello\nworld"));
  });

  it("multi-byte names and texts are hashed as UTF-8", () => {
    expect(contentHash("読む", "héllo 😀")).toBe(sha1Of("読む", "héllo 😀"));
  });

  it("is a 40-char lowercase hex string", () => {
    expect(contentHash("x", "y")).toMatch(/^[0-9a-f]{40}$/);
  });

  it("differs by toolName (case-sensitive)", () => {
    expect(contentHash("bash", "same")).not.toBe(contentHash("Bash", "same"));
  });

  it("the NUL separator keeps name/text boundaries apart: ('ab','c') ≠ ('a','bc')", () => {
    expect(contentHash("ab", "c")).not.toBe(contentHash("a", "bc"));
  });

  it("empty text hashes name + NUL only", () => {
    expect(contentHash("bash", "")).toBe(createHash("sha1").update(Buffer.from("bash\u0000", "utf8")).digest("hex"));
  });
});

describe("normalisation equivalences", () => {
  it("CRLF ≡ LF", () => {
    expect(contentHash("t", "a\r\nb\r\nc")).toBe(contentHash("t", "a\nb\nc"));
  });

  it("trailing spaces and tabs per line are ignored", () => {
    expect(contentHash("t", "a  \nb\t\t\nc \t ")).toBe(contentHash("t", "a\nb\nc"));
  });

  it("CRLF is replaced BEFORE trailing blanks are stripped ('a\\t\\r\\nb' ≡ 'a\\nb')", () => {
    expect(normalizeResultText("a\t\r\nb")).toBe("a\nb");
    expect(contentHash("t", "a\t\r\nb")).toBe(contentHash("t", "a\nb"));
  });

  it("the whole text is trimmed (leading/trailing blank lines and spaces)", () => {
    expect(contentHash("t", "\n\n  a\nb  \n\n")).toBe(contentHash("t", "a\nb"));
  });

  it("leading indentation of inner lines is significant", () => {
    expect(contentHash("t", "a\n  b")).not.toBe(contentHash("t", "a\nb"));
  });

  it("inner blank lines are significant", () => {
    expect(contentHash("t", "a\n\nb")).not.toBe(contentHash("t", "a\nb"));
  });

  it("a lone CR in the middle is not a line break", () => {
    expect(normalizeResultText("a\rb")).toBe("a\rb");
    expect(contentHash("t", "a\rb")).not.toBe(contentHash("t", "a\nb"));
  });

  it("per-line strip covers only space and tab, but the final trim() strips all Unicode whitespace", () => {
    // NBSP at the end of an inner line survives; at the end of the text it is trimmed away.
    expect(normalizeResultText("a\u00a0\nb")).toBe("a\u00a0\nb");
    expect(normalizeResultText("a\nb\u00a0")).toBe("a\nb");
    expect(normalizeResultText("\u3000a")).toBe("a");
  });

  it("a trailing lone CR on the last line is removed by trim()", () => {
    expect(normalizeResultText("a\nb\r")).toBe("a\nb");
  });
});
