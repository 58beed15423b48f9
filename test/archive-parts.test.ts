// Issue 46 item 1: every content part of an archived output is archived. A session of screenshot
// reads (text and image, image only, a small image, kinds chainpress does not know, a long text
// beside an image, a spilled text beside an image) compacted by the built CLI with 0, 1 and 2
// workers, and through the live flush's route and pi's /pruner compact route with real workers:
// the same entries and spill files, records with `parts`, each spilled part's file its JSON text.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeResultText } from "../src/core/content-hash.js";
import { CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_INDEX } from "../src/core/custom-types.js";
import { jsonText } from "../src/core/json-text.js";
import { lightenInPlace } from "../src/core/light-value.js";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { scanSession } from "../src/main/scan-session.js";
import { modelOf } from "../src/main/session-model.js";
import { copyReal, ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { compressFile, failNth } from "./helpers/compress-harness.js";
import { deepJson } from "./helpers/deep-session.js";
import { pngBytes } from "./helpers/image-bytes.js";
import { expectPartsArchived, indexRecords, originalParts, partsChain, READ_IMAGE_TEXT, screenshot } from "./helpers/image-parts-sessions.js";
import { SessionBuilder } from "./helpers/session-builder.js";

beforeAll(ensureBuilt, 180_000);
const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((runner) => runner.close()));
  removeTempDirs();
});

const LONG_TEXT = "a line of a long text beside an image\n".repeat(150);
const SPILLED_TEXT = "a spilled text beside an image\n".repeat(2500);

function screenshotSession(): SessionBuilder {
  const s = new SessionBuilder();
  partsChain(s, "look at the screens", [
    { id: "shot_a", content: [{ type: "text", text: READ_IMAGE_TEXT }, screenshot(1)] },
    { id: "image_only", content: [screenshot(2)] },
    { id: "small_image", content: [{ type: "text", text: READ_IMAGE_TEXT }, { type: "image", data: pngBytes(8, 8).toString("base64"), mimeType: "image/png" }] },
    {
      id: "unknown_kinds",
      name: "record",
      // A widget with a long caption: on the file route a ref inside a part kept inline.
      content: [{ type: "text", text: "recorded" }, { type: "audio", format: "wav", data: Buffer.alloc(60_000, 7).toString("base64") }, { type: "widget", spec: { rows: [1, 2], title: "é ✓ \u{1F600}" }, caption: "a caption é\n".repeat(100) }, null],
    },
    { id: "long_text_image", content: [{ type: "text", text: LONG_TEXT }, screenshot(3)] },
    { id: "spilled_text_image", content: [{ type: "text", text: SPILLED_TEXT }, screenshot(4)] },
    { id: "text_only", name: "bash", args: { command: "ls" }, content: [{ type: "text", text: "plain output ".repeat(40) }] },
  ]);
  partsChain(s, "another screen", [
    { id: "shot_b", content: [{ type: "text", text: READ_IMAGE_TEXT }, screenshot(5)] },
    { id: "text_only_2", name: "bash", args: { command: "pwd" }, content: [{ type: "text", text: "/work" }] },
  ]);
  return s;
}

const blobDirOf = (file: string, s: SessionBuilder) => path.join(path.dirname(file), `${s.sessionId}-blobs`);

/** The appended index entries' records, spill paths reduced to their file names. */
function recordsMasked(file: string): string[] {
  return indexRecords(file).map((record) => {
    if (record.spillPath) record.spillPath = path.basename(record.spillPath);
    for (const part of record.parts ?? []) if (part.spillPath) part.spillPath = path.basename(part.spillPath);
    return jsonText(record);
  });
}

function spillFiles(dir: string): Record<string, string> {
  if (!fs.existsSync(dir)) return {};
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((name) => [name, fs.readFileSync(path.join(dir, name)).toString("base64")]),
  );
}

function cliCompact(file: string, args: string[]) {
  settle(file);
  const run = runCli(["compact", file, "--json", ...args]);
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.out).sessions[0].report;
}

/** upstream's content hash continued with each part's index and JSON, written out here (not the module under test). */
function expectedHash(toolName: string, text: string, parts: ReadonlyArray<{ at: number; part: unknown }>): string {
  const hash = createHash("sha1").update(toolName).update("\0").update(normalizeResultText(text));
  for (const { at, part } of parts) hash.update(`\0part ${at}\0`).update(JSON.stringify(part));
  return hash.digest("hex");
}

describe("archiving every content part", () => {
  it("the CLI with 0, 1 and 2 workers, the live flush's route and pi's compact route give the same records and spill files; each part is the session's", async () => {
    const s = screenshotSession();
    const runs: Array<{ records: string[]; spills: Record<string, string> }> = [];
    for (const workers of ["0", "1", "2"]) {
      const file = s.writeTemp();
      const report = cliCompact(file, ["--workers", workers]);
      expect(report.compressed).toHaveLength(2);
      // One spilled text, and six spilled parts: five screenshots and the audio clip.
      expect(report.spilledFiles).toBe(7);
      expect(expectPartsArchived(file, blobDirOf(file, s))).toBe(9);
      runs.push({ records: recordsMasked(file), spills: spillFiles(blobDirOf(file, s)) });
    }
    for (const route of ["memory", "lines"] as const) {
      for (const workers of [0, 2]) {
        const runner = createChainRunner(workers);
        runners.push(runner);
        const file = s.writeTemp();
        const { result } = await compressFile(file, { runner, path: route });
        expect(result.compressedEntries, route).toHaveLength(2);
        runs.push({ records: recordsMasked(file), spills: spillFiles(blobDirOf(file, s)) });
      }
    }
    expect(Object.keys(runs[0]!.spills).filter((name) => name.endsWith(".json"))).toHaveLength(6);
    for (const other of runs.slice(1)) {
      expect(other.records).toEqual(runs[0]!.records);
      expect(other.spills).toEqual(runs[0]!.spills);
    }
  }, 120_000);

  it("records: resultText is the text parts joined, parts hold the rest (inline or spilled), and the content hash covers them", () => {
    const s = screenshotSession();
    const file = s.writeTemp();
    cliCompact(file, ["--workers", "1"]);
    const byId = new Map(indexRecords(file).map((record) => [record.toolCallId as string, record]));
    const originals = originalParts(file);
    const partsOf = (id: string) => [...originals.entries()].find(([key]) => key.startsWith(`${id}@`))![1];

    const shot = byId.get("shot_a")!;
    expect(shot.resultText).toBe(READ_IMAGE_TEXT);
    expect(Object.keys(shot)).toEqual(["toolCallId", "toolName", "args", "resultText", "isError", "turnIndex", "timestamp", "resultTimestamp", "contentHash", "parts"]);
    const data = (partsOf("shot_a")[0]!.part as { data: string }).data;
    expect(shot.parts).toEqual([{ at: 1, kind: "spilled", type: "image", mimeType: "image/png", dataChars: data.length, spillBytes: expect.any(Number), spillPath: expect.stringMatching(/_part1\.[0-9a-f]{16}\.json$/), spillDigest: expect.stringMatching(/^xxh64:[0-9a-f]{16}$/) }]);
    expect(shot.contentHash).toBe(expectedHash("read", READ_IMAGE_TEXT, partsOf("shot_a")));

    expect(byId.get("image_only")!.resultText).toBe("");
    expect(byId.get("image_only")!.parts.map((p: { at: number; kind: string }) => [p.at, p.kind])).toEqual([[0, "spilled"]]);
    expect(byId.get("small_image")!.parts).toEqual([{ at: 1, kind: "inline", part: partsOf("small_image")[0]!.part }]);
    const unknown = byId.get("unknown_kinds")!;
    expect(unknown.parts.map((p: { at: number; kind: string; type?: string }) => [p.at, p.kind, p.type])).toEqual([
      [1, "spilled", "audio"],
      [2, "inline", undefined],
      [3, "inline", undefined],
    ]);
    expect(unknown.parts[0].mimeType).toBeUndefined();
    expect(unknown.contentHash).toBe(expectedHash("record", "recorded", partsOf("unknown_kinds")));

    // A long text beside an image: the text is the record's, the image its part, whatever route the text took.
    const long = byId.get("long_text_image")!;
    expect(long.resultText).toBe(LONG_TEXT);
    expect(long.parts.map((p: { at: number }) => p.at)).toEqual([1]);
    expect(long.contentHash).toBe(expectedHash("read", LONG_TEXT, partsOf("long_text_image")));
    // A spilled text beside an image: the text's spill file, and the part's, and a hash over both.
    const spilled = byId.get("spilled_text_image")!;
    expect(spilled.resultText).toBe("");
    expect(spilled.spillPath).toMatch(/\.txt$/);
    expect(fs.readFileSync(path.join(blobDirOf(file, s), path.basename(spilled.spillPath)), "utf8")).toBe(SPILLED_TEXT);
    expect(spilled.contentHash).toBe(expectedHash("read", SPILLED_TEXT, partsOf("spilled_text_image")));

    // The same text with another image: another hash.
    expect(byId.get("shot_b")!.resultText).toBe(READ_IMAGE_TEXT);
    expect(byId.get("shot_b")!.contentHash).not.toBe(shot.contentHash);
    // Text-only records are upstream's: no parts, no content hash (inline).
    for (const id of ["text_only", "text_only_2"]) {
      expect(Object.keys(byId.get(id)!)).toEqual(["toolCallId", "toolName", "args", "resultText", "isError", "turnIndex", "timestamp", "resultTimestamp"]);
    }
  });

  it("only an output of text alone is located by the scan: one with an image beside its long text is read whole", async () => {
    const s = screenshotSession();
    partsChain(s, "long text alone", [{ id: "long_text_alone", content: [{ type: "text", text: LONG_TEXT }] }]);
    const file = s.writeTemp();
    const runner = createChainRunner(1);
    runners.push(runner);
    const model = modelOf(await scanSession(file, runner));
    const located = (id: string) => {
      const k = model.messages.findIndex((m) => (m as { toolCallId?: string }).toolCallId === id);
      return model.messageLocation(k)?.output !== undefined;
    };
    expect(located("long_text_alone")).toBe(true);
    expect(located("long_text_image")).toBe(false);
    expect(located("spilled_text_image")).toBe(false);
  });

  it("compact.jsonl: the three screenshots become spilled parts whose data is the original lines' base64", () => {
    const dir = tempDir();
    const file = copyReal("compact.jsonl", dir);
    const originals = originalParts(file);
    const images = [...originals.values()].flat().filter(({ part }) => (part as { type?: string }).type === "image");
    expect(images).toHaveLength(3);
    cliCompact(file, ["--workers", "2", "--include-compacted"]);
    const sessionId = JSON.parse(fs.readFileSync(file, "utf8").split("\n", 1)[0]!).id as string;
    const blobDir = path.join(dir, `${sessionId}-blobs`);
    const withParts = indexRecords(file).filter((record) => record.parts !== undefined);
    expect(withParts).toHaveLength(3);
    for (const record of withParts) {
      expect(record.resultText).toBe(READ_IMAGE_TEXT);
      const [part] = record.parts;
      expect(part.kind).toBe("spilled");
      const original = originals.get(`${record.toolCallId}@${record.resultTimestamp}`)![0]!.part as { data: string };
      const parsed = JSON.parse(fs.readFileSync(path.join(blobDir, path.basename(part.spillPath)), "utf8"));
      expect(parsed.data).toBe(original.data);
      expect(part.dataChars).toBe(original.data.length);
    }
    expect(expectPartsArchived(file, blobDir)).toBe(3);
    // And they come back through `query --parts`: each file is the original base64, decoded.
    const refOf = new Map<string, string>();
    for (const line of fs.readFileSync(file, "utf8").split("\n").filter(Boolean)) {
      const entry = JSON.parse(line);
      if (entry.customType === CUSTOM_TYPE_INDEX) for (const ref of entry.data.refs ?? []) refOf.set(`${ref.toolCallId}@${ref.resultTimestamp}`, ref.shortId);
    }
    const out = path.join(dir, "parts");
    for (const record of withParts) {
      const key = `${record.toolCallId}@${record.resultTimestamp}`;
      const ref = refOf.get(key)!;
      const run = runCli(["query", file, ref, "--parts", out]);
      expect(run.status, run.stderr).toBe(0);
      const original = originals.get(key)![0]!.part as { data: string };
      expect(fs.readFileSync(path.join(out, `${ref}-1.png`)).equals(Buffer.from(original.data, "base64"))).toBe(true);
    }
    expect(fs.readdirSync(out)).toHaveLength(3);
  });
});

describe("a part nested deeper than a thread can clone", () => {
  it.each([5_000, 100_000])("%i levels: kept inline or spilled, the same records on the file and the live route", async (depth) => {
    const s = new SessionBuilder();
    partsChain(s, "deep part", [{ id: "deep", name: "probe", content: [{ type: "text", text: "probed" }, { type: "tree", root: "@@DEEP@@" }] }]);
    const deep = deepJson(depth);
    const runs: string[][] = [];
    for (const route of ["file", "memory"] as const) {
      const file = s.writeTemp();
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('"@@DEEP@@"', deep));
      const { result } = await compressFile(file, { workers: 2, path: route });
      expect(result.compressedEntries, route).toHaveLength(1);
      const [record] = indexRecords(file);
      expect(record!.parts[0].kind).toBe(depth === 5_000 ? "inline" : "spilled");
      expect(expectPartsArchived(file, blobDirOf(file, s))).toBe(1);
      runs.push(recordsMasked(file));
    }
    expect(runs[1]).toEqual(runs[0]);
  }, 120_000);
});

describe("part spill files wherever spill files go", () => {
  it("--out into another folder carries them: verified, placed in the copy's blob folder, its records naming them there", () => {
    const s = screenshotSession();
    const file = s.writeTemp();
    cliCompact(file, ["--workers", "1"]);
    const otherDir = tempDir();
    const out = path.join(otherDir, "copy.jsonl");
    settle(file);
    const run = runCli(["compact", file, "--out", out, "--json"]);
    expect(run.status, run.stderr).toBe(0);
    const copyBlobs = path.join(otherDir, `${s.sessionId}-blobs`);
    const parts = indexRecords(out).flatMap((record) => (record.parts ?? []).filter((p: { kind: string }) => p.kind === "spilled"));
    expect(parts).toHaveLength(6);
    for (const part of parts) expect(path.dirname(part.spillPath)).toBe(copyBlobs);
    expect(spillFiles(copyBlobs)).toEqual(spillFiles(blobDirOf(file, s)));
    expect(expectPartsArchived(out, copyBlobs)).toBe(9);
  });

  it("--out refuses a copy whose part spill file is damaged, naming its record", () => {
    const s = screenshotSession();
    const file = s.writeTemp();
    cliCompact(file, ["--workers", "0"]);
    const part = indexRecords(file).find((record) => record.toolCallId === "image_only")!.parts[0];
    const target = path.join(blobDirOf(file, s), path.basename(part.spillPath));
    const bytes = fs.readFileSync(target);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 1;
    fs.writeFileSync(target, bytes);
    const out = path.join(tempDir(), "copy.jsonl");
    settle(file);
    const run = runCli(["compact", file, "--out", out]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/record image_only: spill file .*_part0\.[0-9a-f]{16}\.json does not match its recorded digest/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("the leftovers sweep removes a dead writer's temporary part file and leaves the part spill files alone", () => {
    const s = screenshotSession();
    const file = s.writeTemp();
    cliCompact(file, ["--workers", "1"]);
    const blobDir = blobDirOf(file, s);
    const before = spillFiles(blobDir);
    const temp = path.join(blobDir, ".tmp-999999-0-0badf00d-shot_a_part1.0123456789abcdef.json");
    fs.writeFileSync(temp, "{");
    const report = cliCompact(file, ["--workers", "1"]);
    expect(report.appendedEntries).toBe(0);
    expect(fs.existsSync(temp)).toBe(false);
    expect(spillFiles(blobDir)).toEqual(before);
    expect(expectPartsArchived(file, blobDir)).toBe(9);
  });
});

describe("the main thread's records, open chains and retries", () => {
  const key = (record: Record<string, any>) => `${record.toolCallId}@${record.resultTimestamp}`;

  it.each([0, 2])("the main thread's records are the archived ones: lightened from compact's model, exactly from pi's messages (%i workers)", async (workers) => {
    for (const route of ["file", "lines"] as const) {
      const s = screenshotSession();
      const file = s.writeTemp();
      const runner = createChainRunner(workers);
      runners.push(runner);
      const { model } = await compressFile(file, { runner, path: route });
      const archived = indexRecords(file);
      expect(archived.filter((record) => record.parts !== undefined)).toHaveLength(7);
      for (const record of archived) {
        const expected = structuredClone(record);
        if (route === "file") lightenInPlace(expected);
        expect(model.state.records.get(key(record)), `${route} ${record.toolCallId}`).toEqual(expected);
      }
    }
  });

  it("an open chain's older screenshots are archived by indexOnly steps with their parts, the same on both routes and any worker count", async () => {
    const settings = { enabled: true, triggerTokens: 1000, keepRecent: 2, minReclaimTokens: 500 };
    const session = () => {
      const s = new SessionBuilder();
      partsChain(s, "closed", [{ id: "closed_shot", content: [{ type: "text", text: READ_IMAGE_TEXT }, screenshot(9)] }]);
      s.user("still running");
      for (let i = 0; i < 8; i++) {
        s.message({ role: "assistant", content: [{ type: "toolCall", id: `open_${i}`, name: "read", arguments: { path: `/shots/${i}.png` } }], stopReason: "toolUse", timestamp: s.tick() });
        s.message({ role: "toolResult", toolCallId: `open_${i}`, toolName: "read", content: [{ type: "text", text: READ_IMAGE_TEXT }, screenshot(20 + i)], isError: false, timestamp: s.tick() });
      }
      return s;
    };
    const runs: Array<{ records: string[]; spills: Record<string, string> }> = [];
    for (const route of ["memory", "file"] as const) {
      for (const workers of [0, 2]) {
        const s = session();
        const file = s.writeTemp();
        const { result } = await compressFile(file, { openChains: settings, path: route, workers });
        expect(result.openChain?.decision.reason).toBe("archive");
        const open = indexRecords(file).filter((record) => String(record.toolCallId).startsWith("open_"));
        expect(open.map((record) => record.toolCallId)).toEqual(Array.from({ length: 6 }, (_, i) => `open_${i}`));
        expect(expectPartsArchived(file, blobDirOf(file, s))).toBe(7);
        runs.push({ records: recordsMasked(file), spills: spillFiles(blobDirOf(file, s)) });
      }
    }
    for (const other of runs.slice(1)) expect(other).toEqual(runs[0]);
  });

  it.each([CUSTOM_TYPE_INDEX, CUSTOM_TYPE_CHAIN])("a chain whose %s append failed is retried: its part spill files are kept, nothing is archived twice", async (customType) => {
    const s = screenshotSession();
    const file = s.writeTemp();
    const first = await compressFile(file, { workers: 1, path: "file", wrapAppend: failNth(customType, 1) });
    expect(first.result.compressedEntries).toHaveLength(1);
    const blobDir = blobDirOf(file, s);
    // The failed chain's spill files were durable before its index entry was tried.
    expect(Object.keys(spillFiles(blobDir))).toHaveLength(7);
    const retry = await compressFile(file, { workers: 1, path: "file" });
    expect(retry.result.skipped.filter((skip) => skip.failed)).toEqual([]);
    const keys = indexRecords(file).map(key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(9);
    expect(expectPartsArchived(file, blobDir)).toBe(9);
    const reference = s.writeTemp();
    await compressFile(reference, { workers: 1, path: "file" });
    expect(spillFiles(blobDir)).toEqual(spillFiles(blobDirOf(reference, s)));
  });
});
