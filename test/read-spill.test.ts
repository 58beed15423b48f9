import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHasher, spillDigestOf, type Hasher } from "../src/core/digest.js";
import type { ToolCallRecord } from "../src/core/prune-types.js";
import { readSpilledBody, resolveRecordBody } from "../src/io/read-spill.js";
import { spillRecord } from "./helpers/spill-record.js";

let root: string;
/** The session's blob folder: the only place spill files are read. */
let dir: string;
let hasher: Hasher;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "chainpress-read-spill-"));
  dir = path.join(root, "s-blobs");
  await mkdir(dir);
  hasher = await loadHasher();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

// Multi-byte characters and a leading BOM: byte length and decoding must both be exact.
const BODY = "\uFEFFhead ✓ line\nsecond line — é\n";

/** Write `text` as a spill file and return the record that describes it. */
async function spilled(name: string, text = BODY, extra: Partial<ToolCallRecord> = {}): Promise<ToolCallRecord> {
  const spillPath = path.join(dir, name);
  await writeFile(spillPath, text, "utf8");
  return spillRecord(spillPath, { toolCallId: name, spillBytes: Buffer.byteLength(text, "utf8"), resultPreview: "head", spillDigest: spillDigestOf(hasher, Buffer.from(text, "utf8")), ...extra });
}

describe("readSpilledBody", () => {
  it("returns the exact text when length and digest match", async () => {
    const record = await spilled("ok.txt");
    expect(await readSpilledBody(record, hasher, dir)).toEqual({ ok: true, text: BODY });
  });

  it("reports a missing file, and a record without a spill path, as missing", async () => {
    const record = await spilled("gone.txt");
    await rm(record.spillPath!);
    expect(await readSpilledBody(record, hasher, dir)).toMatchObject({ ok: false, reason: "missing" });
    const { spillPath: _, ...noPath } = record;
    expect(await readSpilledBody(noPath, hasher, dir)).toMatchObject({ ok: false, reason: "missing" });
  });

  it("reports one flipped byte as corrupt (same length, digest differs)", async () => {
    const record = await spilled("flip.txt");
    const bytes = await readFile(record.spillPath!);
    bytes[5] = bytes[5]! ^ 0x01;
    await writeFile(record.spillPath!, bytes);
    const result = await readSpilledBody(record, hasher, dir);
    expect(result).toMatchObject({ ok: false, reason: "corrupt" });
    expect(result.ok ? "" : result.detail).toContain("digest");
  });

  it("reports a truncated file as corrupt", async () => {
    const record = await spilled("short.txt");
    const bytes = await readFile(record.spillPath!);
    await writeFile(record.spillPath!, bytes.subarray(0, bytes.length - 3));
    const result = await readSpilledBody(record, hasher, dir);
    expect(result).toMatchObject({ ok: false, reason: "corrupt" });
    expect(result.ok ? "" : result.detail).toContain(`expected ${record.spillBytes}`);
  });

  it("with a content hash but no digest (pi-condense's records), still refuses bytes that are not UTF-8", async () => {
    const record = await spilled("latin.txt", "ok", { spillDigest: undefined, contentHash: "0".repeat(64) });
    await writeFile(record.spillPath!, Buffer.from([0x6f, 0xff]));
    expect(await readSpilledBody(record, hasher, dir)).toMatchObject({ ok: false, reason: "corrupt" });
  });

  it("reports a path that cannot be read as unreadable", async () => {
    const record = await spilled("is-a-dir.txt");
    await rm(record.spillPath!);
    await mkdir(record.spillPath!);
    expect(await readSpilledBody(record, hasher, dir)).toMatchObject({ ok: false, reason: "unreadable" });
  });
});

describe("resolveRecordBody", () => {
  it("returns inline text for records that were not spilled", async () => {
    const record: ToolCallRecord = { toolCallId: "c", toolName: "read", args: {}, resultText: "inline", isError: false, turnIndex: 0, timestamp: 1 };
    expect(await resolveRecordBody(record, hasher, dir)).toEqual({ ok: true, text: "inline" });
  });

  it("reads and verifies spilled records", async () => {
    expect(await resolveRecordBody(await spilled("resolve.txt"), hasher, dir)).toEqual({ ok: true, text: BODY });
  });
});
