// The shard scan's hand-off from a worker to the main thread (workers/shard-codec.ts) must give
// back exactly the lines the worker scanned: what the main thread plans from is what an inline
// scan of the same bytes gives, odd keys and lone surrogates included.

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_LINE_BYTES } from "../src/io/read-session.js";
import { scanShard, scanShardInto } from "../src/workers/scan-shard.js";
import { decodeShardScan, ShardPacker, wireTransferList } from "../src/workers/shard-codec.js";
import type { ScannedLine, ShardTask } from "../src/workers/scan-task.js";
import { scanScratch } from "./helpers/scan-scratch.js";

const { writeTemp } = scanScratch("chainpress-codec-");

const header = '{"type":"session","version":3,"id":"codec","timestamp":"2026-08-14T10:00:00.000Z","cwd":"/w"}';

/** Lines meant to trip a codec: every one must come back as the inline scan saw it. */
function trickyFile(): string {
  const lines = [
    header,
    '{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi ünï ✓ 😀"}],"timestamp":1}}',
    // An own `__proto__` key, in the entry and in a call's arguments.
    `{"type":"message","id":"e2","parentId":"e1","__proto__":{"x":1},"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"__proto__":{"polluted":true},"command":"ls"}}],"timestamp":2}}`,
    // Lone surrogates, in a value and in a key.
    `{"type":"message","id":"e3","parentId":"e2","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"a\\ud800b"}],"isError":false,"timestamp":3,"\\udc00":"k"}}`,
    // A long output: a ref, located with its digest.
    `{"type":"message","id":"e4","parentId":"e3","timestamp":"t","message":{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[{"type":"text","text":"${"long \\\\ output ".repeat(300)}"}],"isError":false,"timestamp":4}}`,
    "",
    "not json at all",
    // Two entries glued (the second is not a message: its length is absent).
    `{"type":"custom","customType":"x","id":"e5","parentId":"e4","timestamp":"t","data":{"n":-1.5e300}}{"type":"message","id":"e6","parentId":"e5","timestamp":"t","message":{"role":"user","content":"x","timestamp":5}}`,
    '{"type":"model_change","id":"e7","parentId":"e6","timestamp":"t","provider":"p","modelId":"m","big":12345678901234567890}',
  ];
  return writeTemp(lines.join("\n") + "\n");
}

async function throughCodec(task: ShardTask): Promise<ScannedLine[]> {
  const packer = new ShardPacker();
  const wire = packer.finish(await scanShardInto(task, (line) => packer.add(line)));
  // What postMessage does to the wire: its buffer moved, the rest cloned.
  return [...decodeShardScan(structuredClone(wire, { transfer: wireTransferList(wire) })).lines];
}

describe("shard scan hand-off", () => {
  it("gives back exactly the lines an inline scan gives", async () => {
    const file = trickyFile();
    const task: ShardTask = { kind: "scan-shard", file, start: 0, end: fs.statSync(file).size, maxLineBytes: DEFAULT_MAX_LINE_BYTES };
    const inline = [...(await scanShard(task)).lines];
    const decoded = await throughCodec(task);
    expect(inline.map((line) => line.result.kind)).toEqual(["value", "value", "value", "value", "value", "unparsable", "joined", "value"]);
    expect(decoded).toEqual(inline);
    expect(inline[4]!.output).toBeDefined();
    expect(inline[6]!.messageChars).toEqual([undefined, expect.any(Number)]);
  });

  it("writes the same text and chunk ends whatever room it starts with (it grows as chunks come)", async () => {
    // Enough lines for several chunks, so a small packer grows more than once.
    const lines = [header];
    for (let i = 0; i < 700; i++) lines.push(`{"type":"message","id":"m${i}","parentId":${i === 0 ? "null" : `"m${i - 1}"`},"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"turn ${i} ✓ ${"x".repeat(i % 90)}"}],"timestamp":${i}}}`);
    const file = writeTemp(lines.join("\n") + "\n");
    const task: ShardTask = { kind: "scan-shard", file, start: 0, end: fs.statSync(file).size, maxLineBytes: DEFAULT_MAX_LINE_BYTES };
    const wires = [];
    for (const room of [1, 4096, 10 * 1024 * 1024]) {
      const packer = new ShardPacker(room);
      wires.push(packer.finish(await scanShardInto(task, (line) => packer.add(line))));
    }
    expect(wires[0]!.ends.length).toBeGreaterThan(4);
    for (const wire of wires.slice(1)) {
      expect(wire.ends).toEqual(wires[0]!.ends);
      expect(Buffer.from(wire.text).equals(Buffer.from(wires[0]!.text))).toBe(true);
      // Exactly the text's size: the buffer moved to the main thread carries no slack.
      expect(wire.text.buffer.byteLength).toBe(wire.ends.at(-1));
    }
    expect([...decodeShardScan(wires[0]!).lines]).toEqual([...(await scanShard(task)).lines]);
  });

  it("keeps own __proto__ keys as data and lone surrogates as they are", async () => {
    const file = trickyFile();
    const decoded = await throughCodec({ kind: "scan-shard", file, start: 0, end: fs.statSync(file).size, maxLineBytes: DEFAULT_MAX_LINE_BYTES });
    const valueOf = (i: number) => (decoded[i]!.result as { value: Record<string, any> }).value;
    const withProto = valueOf(2);
    expect(Object.keys(withProto)).toContain("__proto__");
    expect(Object.getPrototypeOf(withProto)).toBe(Object.prototype);
    expect(Object.keys(withProto.message.content[0].arguments)).toEqual(["__proto__", "command"]);
    const surrogates = valueOf(3).message;
    expect(surrogates.content[0].text).toBe("a\ud800b");
    expect(surrogates["\udc00"]).toBe("k");
    expect(valueOf(1).message.content[0].text).toBe("hi ünï ✓ 😀");
  });

  it("moves its bytes to the main thread, which lets them go once its shard is decoded", async () => {
    const file = trickyFile();
    const task: ShardTask = { kind: "scan-shard", file, start: 0, end: fs.statSync(file).size, maxLineBytes: DEFAULT_MAX_LINE_BYTES };
    const packer = new ShardPacker();
    const wire = packer.finish(await scanShardInto(task, (line) => packer.add(line)));
    expect(wire.text.byteLength).toBeGreaterThan(0);
    // The main thread reads the text as Latin-1: a unit up to U+00FF travels as its own byte,
    // every other one escaped.
    const text = Buffer.from(wire.text).toString("latin1");
    expect(text).toContain("hi \u00fcn\u00ef \\u2713 \\ud83d\\ude00");
    const arrived = structuredClone(wire, { transfer: wireTransferList(wire) });
    expect(wire.text.byteLength).toBe(0); // moved, not copied
    const scan = decodeShardScan(arrived);
    const lines = [...scan.lines];
    expect(lines).toHaveLength(8);
    expect(arrived.text.buffer.byteLength).toBe(0); // released: nothing keeps the bytes alive
  });
});
