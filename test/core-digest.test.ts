// xxHash64 digests used for spill files (chainpress addition, not in the upstream format): 16 lowercase
// hex chars; string hashing is over UTF-8 bytes; `spillDigest` = "xxh64:" + hex of the exact bytes.
// Known vectors are XXH64 with seed 0 from the xxHash reference implementation.
import { beforeAll, describe, expect, it } from "vitest";
import { digestMatches, loadHasher, spillDigestOf, type Hasher } from "../src/core/digest.js";

let hasher: Hasher;
beforeAll(async () => {
  hasher = await loadHasher();
});

const enc = (s: string) => new TextEncoder().encode(s);

describe("Hasher", () => {
  it("matches the XXH64 seed-0 reference vectors", () => {
    expect(hasher.hex64("")).toBe("ef46db3751d8e999");
    expect(hasher.hex64("a")).toBe("d24ec4f1a98c6e5b");
    expect(hasher.hex64("abc")).toBe("44bc2cf5ad770999");
  });

  it("hex64(string) equals hex64Bytes(UTF-8 bytes of the string), including non-ASCII", () => {
    for (const s of ["", "abc", "héllo 漢字 😀", "x".repeat(10_000)]) {
      expect(hasher.hex64(s)).toBe(hasher.hex64Bytes(enc(s)));
    }
  });

  it("always returns 16 lowercase hex chars (zero-padded)", () => {
    for (let i = 0; i < 300; i++) {
      expect(hasher.hex64(`k${i}`)).toMatch(/^[0-9a-f]{16}$/);
      expect(hasher.hex64Bytes(enc(`k${i}`))).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it("loadHasher returns the same instance on repeated calls", async () => {
    expect(await loadHasher()).toBe(hasher);
  });
});

describe("spillDigestOf / digestMatches", () => {
  it("spillDigest is 'xxh64:' + 16 hex of the exact bytes", () => {
    expect(spillDigestOf(hasher, enc("abc"))).toBe("xxh64:44bc2cf5ad770999");
  });

  it("digestMatches accepts the exact bytes and rejects any change", () => {
    const bytes = enc("full output\n");
    const digest = spillDigestOf(hasher, bytes);
    expect(digestMatches(hasher, digest, bytes)).toBe(true);
    expect(digestMatches(hasher, digest, enc("full output"))).toBe(false);
    expect(digestMatches(hasher, digest, enc("full output\r\n"))).toBe(false);
  });

  it("a digest without the prefix or in upper case does not match", () => {
    const bytes = enc("abc");
    expect(digestMatches(hasher, "44bc2cf5ad770999", bytes)).toBe(false);
    expect(digestMatches(hasher, "xxh64:44BC2CF5AD770999", bytes)).toBe(false);
  });
});
