/**
 * Archived non-text parts come back (issue 46 item 2), from real session files and real spill
 * files written as chainpress's writer writes them (helpers/parts-session.ts): context_tree_query
 * in a real loaded session attaches images after its text, byte for byte, within its per-call
 * budget, lists every part and says how to get what it left out; `chainpress query` lists them,
 * `--raw` stays text only, `--parts DIR` writes each part's exact bytes; a missing or damaged part
 * spill file costs that part only; a context edit hides the parts with the text.
 */

import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nonTextParts, type ArchivedPart, type SpilledPart } from "../src/core/archived-parts.js";
import { OMITTED_OUTPUT_TEXT } from "../src/core/context-edits.js";
import { loadHasher } from "../src/core/digest.js";
import { jsonText } from "../src/core/json-text.js";
import { PARTS_ONLY_BODY } from "../src/core/query.js";
import { MAX_IMAGE_CHARS_PER_CALL, MAX_IMAGES_PER_CALL } from "../src/core/query-parts.js";
import { queryArchive } from "../src/extension/query-tool.js";
import { readArchivedPart } from "../src/io/read-part.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { pngBytes } from "./helpers/image-bytes.js";
import { imageDataOf, outputOf, partsOutputs, writePartsSession, type PartsSession } from "./helpers/archived-parts-session.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";

type Content = Array<{ type: string; text?: string; data?: string; mimeType?: string }>;

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** A fresh session of partsOutputs() in its own folder, settled so the CLI does not take it for one being written. */
async function freshSession(outputs = partsOutputs()): Promise<PartsSession> {
  const session = await writePartsSession(tempDir(), outputs);
  settle(session.file);
  return session;
}

function spilledPart(session: PartsSession, ref: string): SpilledPart {
  const index = session.outputs.findIndex((output) => output.ref === ref);
  return session.records[index]!.parts!.find((part): part is SpilledPart => part.kind === "spilled")!;
}

function appendEdit(file: string, targetId: string, replacement: null | { content: unknown }): void {
  const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
  fs.appendFileSync(file, `${JSON.stringify({ type: "context_edit", id: `edit${lines.length}`, parentId: last.id, timestamp: new Date().toISOString(), targetId, replacement })}\n`);
  settle(file);
}

/** context_tree_query as pi calls it, on the session loaded into a real pi SessionManager. */
async function withTool<T>(file: string, use: (query: (params: object) => Promise<{ content: Content }>) => Promise<T>): Promise<T> {
  const host = await PiHost.start(SessionManager.open(file), tempAgentDir());
  try {
    const tool = host.tools.get("context_tree_query")!;
    return await use(async (params) => (await tool.execute("q", params, undefined, undefined, host.ctx())) as unknown as { content: Content });
  } finally {
    await host.runtime.runner.close();
  }
}

describe("reading a part back (io/read-part.ts)", () => {
  it("a spilled part comes back exactly; a missing, damaged, forged or misdescribed file is a failure saying why", async () => {
    const session = await freshSession();
    const hasher = await loadHasher();
    const record = session.records[0]!;
    const part = spilledPart(session, "t1");
    const original = nonTextParts(outputOf(session, "t1").content)[0]!.part;
    const read = await readArchivedPart(record, part, hasher, session.blobDir);
    expect(read).toEqual({ ok: true, part: original });
    expect(jsonText((read as { part: unknown }).part)).toBe(fs.readFileSync(part.spillPath, "utf8"));

    // Outside the blob folder: refused, nothing read.
    const forged: ArchivedPart = { ...part, spillPath: path.join(session.dir, "elsewhere", path.basename(part.spillPath)) };
    expect(await readArchivedPart(record, forged, hasher, session.blobDir)).toMatchObject({ ok: false, reason: "refused" });
    // Its facts say another mime type: the file is not shown as what the record describes.
    expect(await readArchivedPart(record, { ...part, mimeType: "image/webp" }, hasher, session.blobDir)).toMatchObject({ ok: false, reason: "corrupt", detail: expect.stringContaining('mime type "image/png", its record says "image/webp"') });
    // One byte changed, same size: the digest says so.
    const bytes = fs.readFileSync(part.spillPath);
    bytes[bytes.length - 10] = bytes[bytes.length - 10] === 0x41 ? 0x42 : 0x41;
    fs.writeFileSync(part.spillPath, bytes);
    expect(await readArchivedPart(record, part, hasher, session.blobDir)).toMatchObject({ ok: false, reason: "corrupt", detail: expect.stringContaining("does not match its recorded digest") });
    fs.rmSync(part.spillPath);
    expect(await readArchivedPart(record, part, hasher, session.blobDir)).toMatchObject({ ok: false, reason: "missing", detail: `spill file not found: ${part.spillPath}` });
  });
});

describe("a part spill file is read only in the session's own blob folder, a real folder", () => {
  it("a blob folder that is a link to the real one: refused, nothing read", async () => {
    const session = await freshSession();
    const part = spilledPart(session, "t1");
    const moved = path.join(tempDir(), "moved-blobs");
    fs.renameSync(session.blobDir, moved);
    fs.symlinkSync(moved, session.blobDir);
    const read = await readArchivedPart(session.records[0]!, part, await loadHasher(), session.blobDir);
    expect(read).toEqual({ ok: false, reason: "refused", detail: `blob folder ${session.blobDir} is a symbolic link, not a folder; refused, nothing read` });
  });
});

describe("context_tree_query by ref in pi", () => {
  let session: PartsSession;
  beforeAll(async () => {
    session = await freshSession();
  });

  it("attaches an output's images after its text, byte for byte, as pi's read returns an image; a text-only output's block is as before", async () => {
    await withTool(session.file, async (query) => {
      const { content } = await query({ toolCallIds: ["t1", "t4"] });
      expect(content).toHaveLength(2);
      expect(content[0]!.text!.endsWith('\n\n---\n\n## toolRef: t4\nTool: bash\nArgs: {\n  "path": "plain.png"\n}\nStatus: OK\nTurn: -1\n\nplain text output\nline 2')).toBe(true);
      expect(content[1]).toEqual({ type: "image", data: imageDataOf(session, "t1")[0], mimeType: "image/png" });
      expect(content[0]!.text).toContain("Parts: 1 besides the text, in content order (images are attached after the text; pages hold the text only)\n- part 1, content[1]: image (image/png, 1280x800, ");
      expect(content[0]!.text).toContain("attached after the text, as image 1 of this result\n\nRead image file [image/png]");

      // Several parts: images in content order; the others said to exist, with their kind and size.
      const mixed = (await query({ toolCallIds: ["t2", "t3"] })).content;
      expect(mixed.slice(1)).toEqual([...imageDataOf(session, "t2"), ...imageDataOf(session, "t3")].map((data, i) => ({ type: "image", data, mimeType: ["image/gif", "image/jpeg", "image/png"][i] })));
      const text = mixed[0]!.text!;
      expect(text).toContain('- part 2, content[2]: a part of type "audio" (88 bytes of JSON): not an image, so not attached; `chainpress query <session> t2 --parts DIR` writes it to a file');
      expect(text).toContain('- part 3, content[4]: a part of type "resource" (49 bytes of JSON): not an image, so not attached');
      expect(text).toContain("- part 4, content[5]: image (image/jpeg, 320x200, 2,124 bytes): attached after the text, as image 2 of this result");
      expect(text).toContain("- part 1, content[0]: image (image/png, 16x16, 186 bytes): attached after the text, as image 3 of this result");
    });
  });

  it(`attaches at most ${MAX_IMAGES_PER_CALL} images a call, names the rest and how to get them, and parts gets them`, async () => {
    await withTool(session.file, async (query) => {
      const all = (await query({ toolCallIds: ["t1", "t2", "t3", "t5"] })).content;
      const images = all.slice(1);
      expect(images).toHaveLength(MAX_IMAGES_PER_CALL);
      // t1 (1), t2 (2), t3 (1): 4 before t5, whose first 4 fit.
      const frames = imageDataOf(session, "t5");
      expect(images.slice(4).map((image) => image.data)).toEqual(frames.slice(0, 4));
      const text = all[0]!.text!;
      expect(text).toContain("- part 5, content[5]: image (image/png, 44x30, 294 bytes): left out: this call's image budget is spent");
      expect(text).toContain(`Left out (a call attaches at most 8 images, 4,718,592 base64 characters): parts 5, 6, 7, 8, 9, 10; read them with context_tree_query {"toolCallIds":["t5"],"parts":[5,6,7,8,9,10]}`);

      const rest = (await query({ toolCallIds: ["t5"], parts: [5, 6, 7, 8, 9, 10] })).content;
      expect(rest.slice(1).map((image) => image.data)).toEqual(frames.slice(4));
      expect(rest[0]!.text).toContain("Parts: 10 besides the text, in content order; 6 asked for");
      expect(rest[0]!.text).not.toContain("- part 4,");
      expect(rest[0]!.text!.endsWith(`\n\n${PARTS_ONLY_BODY}`)).toBe(true);
    });
  });

  it(`attaches at most ${MAX_IMAGE_CHARS_PER_CALL} base64 characters a call; an image larger than that is never attached`, async () => {
    const png = (filler: number, seed: number) => ({ type: "image", data: pngBytes(100, 100, filler, seed).toString("base64"), mimeType: "image/png" });
    // 3 MiB of base64 each (two do not fit one call), then one over the whole budget, then a small one.
    const big = await freshSession([{ ref: "t1", toolCallId: "big", toolName: "screenshot", content: [{ type: "text", text: "big" }, png(2_359_296, 1), png(2_359_296, 2), png(3_600_000, 3), png(10, 4)] }]);
    const data = imageDataOf(big, "t1");
    expect(data[0]!.length + data[1]!.length).toBeGreaterThan(MAX_IMAGE_CHARS_PER_CALL);
    expect(data[2]!.length).toBeGreaterThan(MAX_IMAGE_CHARS_PER_CALL);
    await withTool(big.file, async (query) => {
      const { content } = await query({ toolCallIds: ["t1"] });
      expect(content.slice(1).map((image) => image.data)).toEqual([data[0], data[3]]);
      const text = content[0]!.text!;
      // A spilled part left out is not read: its size in pixels is not known.
      expect(text).toMatch(/- part 2, content\[2\]: image \(image\/png, [\d,]+ bytes\): left out: this call's image budget is spent/);
      expect(text).toContain("left out: larger than any call may attach (4,718,592 base64 characters); `chainpress query <session> t1 --parts DIR` writes it to a file");
      expect(text).toContain(`read it with context_tree_query {"toolCallIds":["t1"],"parts":[2]}`);
      expect((await query({ toolCallIds: ["t1"], parts: [2] })).content[1]!.data).toBe(data[1]);
    });
  }, 60_000);

  it("pages hold text only; parts goes with one ref and names parts the output has", async () => {
    await withTool(session.file, async (query) => {
      const page = (await query({ toolCallIds: ["t2"], offset: "1" })).content;
      expect(page).toHaveLength(1);
      expect(page[0]!.text).toBe("two shots\nand a second text\n[Page of t2: lines 1-2 of 2; end of output]");
      await expect(query({ toolCallIds: ["t1", "t2"], parts: [1] })).rejects.toThrow("parts reads non-text parts of one output: pass exactly one ref in toolCallIds");
      await expect(query({ toolCallIds: ["t1"], parts: [1], offset: "1" })).rejects.toThrow(/pass one or the other/);
      await expect(query({ toolCallIds: ["t1"], parts: [0] })).rejects.toThrow(/part numbers from 1/);
      await expect(query({ toolCallIds: ["t2"], parts: [5] })).rejects.toThrow("t2 has 4 parts besides its text (1 to 4); part 5 is none of them");
      await expect(query({ toolCallIds: ["t4"], parts: [1] })).rejects.toThrow("t4 has no parts besides its text; part 1 is none of them");
    });
  });

  it("a part whose spill file is missing: the text still comes back, the part is unavailable and says why", async () => {
    const broken = await freshSession();
    const part = spilledPart(broken, "t1");
    fs.rmSync(part.spillPath);
    await withTool(broken.file, async (query) => {
      const { content } = await query({ toolCallIds: ["t1", "t3"] });
      expect(content.map((c) => c.type)).toEqual(["text", "image"]);
      expect(content[1]!.data).toBe(imageDataOf(broken, "t3")[0]);
      expect(content[0]!.text).toContain(`: unavailable (missing): spill file not found: ${part.spillPath}\n\nRead image file [image/png]`);
      expect(content[0]!.text).toContain("as image 1 of this result");
    });
  });
});

describe("a context edit of an archived output hides its parts too", () => {
  it("replaced or omitted: no image, no parts list, no part by number; query --parts writes none", async () => {
    const session = await freshSession();
    appendEdit(session.file, session.resultEntryIds.t2!, { content: "redacted screenshot" });
    appendEdit(session.file, session.resultEntryIds.t1!, null);
    await withTool(session.file, async (query) => {
      const { content } = await query({ toolCallIds: ["t1", "t2", "t3"] });
      expect(content.map((c) => c.type)).toEqual(["text", "image"]);
      expect(content[1]!.data).toBe(imageDataOf(session, "t3")[0]);
      const [t1, t2] = content[0]!.text!.split("\n\n---\n\n");
      expect(t1).not.toContain("Parts:");
      expect(t1!.endsWith(`\n\n${OMITTED_OUTPUT_TEXT}`)).toBe(true);
      expect(t2).not.toContain("Parts:");
      expect(t2!.endsWith("\n\nredacted screenshot")).toBe(true);
      await expect(query({ toolCallIds: ["t2"], parts: [1] })).rejects.toThrow("t2 has no parts besides its text");
    });
    // The extension's own copy of the function, on the model the CLI loads: the same.
    const model = await loadSessionModel(session.file);
    expect((await queryArchive(model.state, ["t1", "t2"], model.blobDir, model.editedOutputs)).content).toHaveLength(1);

    const dir = path.join(session.dir, "out");
    const run = runCli(["query", session.file, "t1", "t2", "t3", "--parts", dir]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(["t3-1.png"]);
    const json = runCli(["query", session.file, "t2", "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({ text: "redacted screenshot", parts: [] });
  });
});

describe("chainpress query", () => {
  let session: PartsSession;
  beforeAll(async () => {
    session = await freshSession();
  });

  it("says which parts each output has: the text context_tree_query returns", async () => {
    const refs = ["t1", "t2", "t3", "t4", "t5"];
    const run = runCli(["query", session.file, ...refs]);
    expect(run.status, run.stderr).toBe(0);
    const model = await loadSessionModel(session.file);
    const tool = await queryArchive(model.state, refs, model.blobDir, model.editedOutputs);
    // The CLI shows the session's user turn where the archive records none; otherwise the same text.
    expect(run.out).toBe(`${tool.content[0]!.type === "text" ? tool.content[0]!.text.replaceAll("Turn: -1", "Turn: 1 (user turn in the session; the archive records none)") : ""}\n`);
    expect(run.out).toContain("Parts: 4 besides the text");
  });

  it("--parts DIR writes each non-text part as DIR/tN-<n>.<ext>, byte-exact to its decoded data, else its JSON text; --raw stays text only", () => {
    const dir = path.join(session.dir, "parts-out");
    const run = runCli(["query", session.file, "t1", "t2", "t3", "t4", "--parts", dir, "--raw"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.out).toBe(["Read image file [image/png]", "two shots\nand a second text", "", "plain text output\nline 2"].join("\0"));
    expect(fs.readdirSync(dir).sort()).toEqual(["t1-1.png", "t2-1.gif", "t2-2.bin", "t2-3.bin", "t2-4.jpeg", "t3-1.png"]);
    const file = (name: string) => fs.readFileSync(path.join(dir, name));
    expect(file("t1-1.png").equals(Buffer.from(imageDataOf(session, "t1")[0]!, "base64"))).toBe(true);
    expect(file("t1-1.png").subarray(1, 4).toString()).toBe("PNG");
    const t2 = imageDataOf(session, "t2");
    expect(file("t2-1.gif").equals(Buffer.from(t2[0]!, "base64"))).toBe(true);
    expect(file("t2-2.bin").equals(Buffer.from("UklGRiQAAABXQVZF", "base64"))).toBe(true);
    expect(file("t2-3.bin").toString()).toBe('{"type":"resource","uri":"file:///tmp/notes.txt"}');
    expect(file("t2-4.jpeg").equals(Buffer.from(t2[1]!, "base64"))).toBe(true);
    expect(file("t3-1.png").equals(Buffer.from(imageDataOf(session, "t3")[0]!, "base64"))).toBe(true);
    // The same output by its tool-call id: its files are named by its short ref.
    const again = runCli(["query", session.file, "img_only", "--parts", dir]);
    expect(again.status, again.stderr).toBe(0);
    expect(fs.readdirSync(dir).filter((name) => name.startsWith(".")).length).toBe(0);
  });

  it("--json lists the parts (with --parts: the files written)", () => {
    const dir = path.join(session.dir, "json-out");
    const run = runCli(["query", session.file, "t2", "--json", "--parts", dir]);
    expect(run.status, run.stderr).toBe(0);
    const listed = JSON.parse(run.out) as { text: string; parts: Array<Record<string, unknown>> };
    expect(listed.text).toBe("two shots\nand a second text");
    expect(listed.parts).toEqual([
      { n: 1, at: 1, type: "image", mimeType: "image/gif", bytes: 924, width: 64, height: 48, spilled: false, file: "t2-1.gif", available: true, written: path.join(dir, "t2-1.gif"), from: "data" },
      { n: 2, at: 2, type: "audio", mimeType: "audio/wav", bytes: 88, spilled: false, file: "t2-2.bin", available: true, written: path.join(dir, "t2-2.bin"), from: "data" },
      { n: 3, at: 4, type: "resource", mimeType: null, bytes: 49, spilled: false, file: "t2-3.bin", available: true, written: path.join(dir, "t2-3.bin"), from: "json" },
      { n: 4, at: 5, type: "image", mimeType: "image/jpeg", bytes: 2124, width: 320, height: 200, spilled: false, file: "t2-4.jpeg", available: true, written: path.join(dir, "t2-4.jpeg"), from: "data" },
    ]);
    const t1 = JSON.parse(runCli(["query", session.file, "t1", "--json"]).out) as { parts: Array<Record<string, unknown>> };
    expect(t1.parts).toEqual([{ n: 1, at: 1, type: "image", mimeType: "image/png", bytes: expect.any(Number), width: 1280, height: 800, spilled: true, file: "t1-1.png", available: true }]);
    expect(JSON.parse(runCli(["query", session.file, "t4", "--json"]).out)).toMatchObject({ text: "plain text output\nline 2", parts: [] });
  });

  it("a missing part spill file: the text and the other parts come back, the error names the session file, ref and part; exit 1", async () => {
    const broken = await freshSession();
    const part = spilledPart(broken, "t1");
    fs.rmSync(part.spillPath);
    const dir = path.join(broken.dir, "out");
    const run = runCli(["query", broken.file, "t1", "t3", "--parts", dir]);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`chainpress: ${broken.file}: t1: part 1: missing part: spill file not found: ${part.spillPath}\n`);
    expect(run.out).toContain(`: unavailable (missing): spill file not found: ${part.spillPath}\n\nRead image file [image/png]`);
    expect(fs.readdirSync(dir)).toEqual(["t3-1.png"]);
    const raw = runCli(["query", broken.file, "t1", "--raw"]);
    expect(raw.status, raw.stderr).toBe(0);
    expect(raw.out).toBe("Read image file [image/png]");
    const json = runCli(["query", broken.file, "t1", "--json"]);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.out).parts[0]).toMatchObject({ available: false, reason: "missing", detail: `spill file not found: ${part.spillPath}` });
  });

  it("writes nothing through a link: a --parts folder that is a link, or a link where a file goes, is refused and left as it is", () => {
    const elsewhere = tempDir();
    const linkDir = path.join(session.dir, "linked-out");
    fs.symlinkSync(elsewhere, linkDir);
    const run = runCli(["query", session.file, "t3", "--parts", linkDir]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`chainpress: ${session.file}: ${linkDir}: the --parts folder is a symbolic link, not a folder`);
    expect(fs.readdirSync(elsewhere)).toEqual([]);

    const dir = path.join(session.dir, "with-link");
    fs.mkdirSync(dir);
    const target = path.join(elsewhere, "victim.png");
    fs.writeFileSync(target, "not to be replaced");
    fs.symlinkSync(target, path.join(dir, "t3-1.png"));
    const refused = runCli(["query", session.file, "t3", "--parts", dir]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`chainpress: ${session.file}: t3: part 1: not written: ${path.join(dir, "t3-1.png")}: part file is a symbolic link, not a regular file`);
    expect(fs.readFileSync(target, "utf8")).toBe("not to be replaced");
    expect(fs.lstatSync(path.join(dir, "t3-1.png")).isSymbolicLink()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(["t3-1.png"]);
  });

  it("--help says what --parts writes, a part without base64 data included", () => {
    const help = runCli(["query", "--help"]);
    expect(help.status).toBe(0);
    expect(help.out.replace(/\s+/g, " ")).toContain("--parts DIR writes each part of each output to DIR/tN-<n>.<ext> (n as listed; ext png, jpeg, gif, webp from its mime type, else bin): exactly the bytes its base64 data decodes to, or, for a part without base64 data, the part's JSON text.");
  });

  it("--parts goes with refs only", () => {
    const run = runCli(["query", session.file, "--search", "shots", "--parts", session.dir]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("--parts writes the parts of outputs by ref");
  });
});
