// Spill layout (UPSTREAM-FORMAT.md §5): directory `<sessionDir>/<sessionId>-blobs`, one file per
// occurrence key. Upstream's file name (sanitised key + ".txt") is lossy (§13.9: `a.b@1` and `a_b@1`
// collide); chainpress must keep names inside the folder AND distinct per key, deterministically.
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadHasher, type Hasher } from "../src/core/digest.js";
import { blobDirFor, confinedSpillName, sanitizeForFileName, spillFileName } from "../src/core/spill-layout.js";

let hasher: Hasher;
beforeAll(async () => {
  hasher = await loadHasher();
});

const SESSION_DIR = "/home/u/.pi/agent/sessions/--repo--";
const SESSION_ID = "0197a3f2-7c1e-7d2a-9b11-5f6e7a8b9c0d"; // pi session ids are UUIDs

function safelyInside(name: string): void {
  const dir = blobDirFor(SESSION_DIR, SESSION_ID);
  const full = path.join(dir, name);
  expect(path.dirname(full)).toBe(dir);
  expect(path.relative(dir, full).startsWith("..")).toBe(false);
  expect(name).not.toMatch(/[/\\\0]/);
  expect(name).not.toBe(".");
  expect(name).not.toBe("..");
  expect(name.endsWith(".txt")).toBe(true);
  expect(Buffer.byteLength(name, "utf8")).toBeLessThanOrEqual(255); // common file-system name limit
}

describe("blobDirFor", () => {
  it("is <sessionDir>/<sessionId>-blobs for a UUID session id", () => {
    expect(blobDirFor(SESSION_DIR, SESSION_ID)).toBe(`${SESSION_DIR}/${SESSION_ID}-blobs`);
  });
});

describe("sanitizeForFileName", () => {
  it("replaces every character outside [A-Za-z0-9_-] with _ (bash_23@1150 → bash_23_1150)", () => {
    expect(sanitizeForFileName("bash_23@1150")).toBe("bash_23_1150");
    expect(sanitizeForFileName("a.b/c\\d e-F9")).toBe("a_b_c_d_e-F9");
  });
});

describe("spillFileName", () => {
  it("keeps a readable sanitised prefix and ends in .txt", () => {
    const name = spillFileName(hasher, "call_0@1786701610020");
    expect(name.startsWith("call_0_1786701610020")).toBe(true);
    expect(name).toMatch(/^[A-Za-z0-9_.-]+\.txt$/);
  });

  it("is deterministic (same key → same name, across hasher loads)", async () => {
    const again = await loadHasher();
    expect(spillFileName(hasher, "toolu_01@5")).toBe(spillFileName(again, "toolu_01@5"));
  });

  it("`a.b@1` and `a_b@1` get DIFFERENT names (upstream's sanitiser collides them)", () => {
    expect(sanitizeForFileName("a.b@1")).toBe(sanitizeForFileName("a_b@1"));
    expect(spillFileName(hasher, "a.b@1")).not.toBe(spillFileName(hasher, "a_b@1"));
  });

  it("different occurrences of one id get different names", () => {
    expect(spillFileName(hasher, "call_0@1")).not.toBe(spillFileName(hasher, "call_0@2"));
    expect(spillFileName(hasher, "call_0")).not.toBe(spillFileName(hasher, "call_0@1"));
  });

  it("ids that would differ only past a long shared prefix still get different names", () => {
    const base = "x".repeat(200);
    expect(spillFileName(hasher, `${base}A@1`)).not.toBe(spillFileName(hasher, `${base}B@1`));
  });

  it.each([
    ["../../etc/passwd@1"],
    ["a/b/c@2"],
    ["..@3"],
    [".."],
    ["."],
    ["nul\0byte@4"],
    ["back\\slash@5"],
    ["x".repeat(300)],
    ["日本語のid😀@6"],
    [""],
  ])("stays inside the blob folder with a sane name: %j", (key) => {
    safelyInside(spillFileName(hasher, key));
  });

  it("unicode ids with the same length but different characters get different names", () => {
    // Both sanitise to the same underscores; the hash keeps them apart.
    expect(sanitizeForFileName("日本")).toBe(sanitizeForFileName("中国"));
    expect(spillFileName(hasher, "日本@1")).not.toBe(spillFileName(hasher, "中国@1"));
  });
});

describe("confinedSpillName", () => {
  const blobs = `${SESSION_ID}-blobs`;
  const name = "call_0_1150.0123456789abcdef.txt";

  it("names the file of a path written into a blob folder of the session's name, wherever that folder was", () => {
    expect(confinedSpillName(`${SESSION_DIR}/${blobs}/${name}`, blobs)).toBe(name);
    expect(confinedSpillName(`/elsewhere/moved/${blobs}/${name}`, blobs)).toBe(name);
    expect(confinedSpillName(`${blobs}/${name}`, blobs)).toBe(name);
    // pi-condense's own names: the sanitised key and .txt.
    expect(confinedSpillName(`${SESSION_DIR}/${blobs}/call_0_1150.txt`, blobs)).toBe("call_0_1150.txt");
  });

  it("refuses any other folder, a climbing or unnormalised path, and hidden or empty names", () => {
    for (const stored of [
      "/etc/passwd",
      `${SESSION_DIR}/other-blobs/${name}`,
      `${SESSION_DIR}/${blobs}/../${name}`,
      `${SESSION_DIR}/${blobs}/../${blobs}/${name}`,
      `../${blobs}/${name}`,
      `${SESSION_DIR}/${blobs}/./${name}`,
      `${SESSION_DIR}//${blobs}/${name}`,
      `${SESSION_DIR}/${blobs}/${name}/`,
      `${SESSION_DIR}/${blobs}/`,
      `${SESSION_DIR}/${blobs}/..`,
      `${SESSION_DIR}/${blobs}/.tmp-1-0-00000000-${name}`,
      `${SESSION_DIR}/${blobs}/a\0b`,
      name,
      "",
    ]) {
      expect(confinedSpillName(stored, blobs), JSON.stringify(stored)).toBeUndefined();
    }
  });
});
