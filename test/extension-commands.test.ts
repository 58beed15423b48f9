/**
 * `/pruner compact | status` and the `context_tree_query` tool, on pi's real SessionManager.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { blobDirFor } from "../src/core/spill-layout.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function track(dir: string): string {
  dirs.push(dir);
  return dir;
}

/** Outputs long enough that compressing their chains shrinks the context (core/chain-shrink.ts). */
const longOutput = (label: string): string => `${label} raw output\n`.repeat(40);

async function playChains(host: PiHost, clock: MessageClock, labels: string[], output = longOutput): Promise<void> {
  for (const label of labels) {
    for (const message of chainMessages(clock, label, [output(label)])) await host.message(message);
    await host.endRun();
    await host.idle();
  }
}

/** An entry's data with what differs between two sessions that archived the same outputs (when, and where the spill folder is) masked. */
function masked(data: any): any {
  if (data.compressedAt) data.compressedAt = 0;
  for (const record of data.toolCalls ?? []) if (record.spillPath) record.spillPath = path.basename(record.spillPath);
  return data;
}

const blockIds = (host: PiHost) => host.customEntries("context-prune-chain").map((e) => e.data.blockId);

describe("/pruner compact", () => {
  it("compresses every remaining closed chain (window 0) and says how much it reclaimed", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), track(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4"]);
    expect(blockIds(host)).toEqual(["b1"]);
    await host.command("/pruner compact");
    expect(blockIds(host)).toEqual(["b1", "b2", "b3", "b4"]);
    expect(host.notices.at(-1)!.message).toMatch(/^pruner: compacted 3 chains \(b2, b3, b4\), reclaimed ~\d+ tokens$/);
    expect(host.statuses.get("chainpress")).toBe("\u2502 chainpress \u00b7 4 chains compressed \u00b7 4 archived");
    await host.command("/pruner compact");
    expect(host.notices.at(-1)!.message).toBe("pruner: no chains eligible for compaction");
  });

  it("reports a failure as a notice and leaves the chains for the next pass", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), track(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2"]);
    host.failAppends = 2; // both index entries of the first attempt
    await host.command("/pruner compact");
    expect(host.notices.at(-1)!.message).toMatch(/^pruner: no chains eligible for compaction \(2 skipped \u2014 index append failed: injected append failure\)$/);
    await host.command("/pruner compact");
    expect(blockIds(host)).toHaveLength(2);
  });

  it("status reports chains, archive, context saved and diagnostics", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), track(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4"], (label) => `${label} `.repeat(200));
    await host.command("/pruner status");
    const lines = host.notices.at(-1)!.message.split("\n");
    expect(lines[0]).toBe("pruner: on (window 3, grace 3, workers 0)");
    expect(lines[1]).toBe("chains: 4 closed, 0 interrupted, 1 compressed");
    // Nothing spilled: no spill folder exists, so none is named.
    expect(lines[2]).toBe("archived: 1 outputs, 0 spilled");
    expect(lines[3]).toMatch(/^context: ~[\d,]+ -> ~[\d,]+ tokens \(~[\d,]+ saved\)$/);
    expect(lines[4]).toMatch(/^saving so far: ~[\d,]+ prompt tokens, \$\d+\.\d\d( \(-?\d+\.\d%\))? over [\d,]+ requests \(replayed: \$\d+\.\d\d without chainpress, \$\d+\.\d\d with; 5-minute cache\)$/);
    expect(lines[5]).toBe("diagnostics: unresolved-range 0, range-id-mismatch 0, orphan-sweep 0, backfill-empty 0, backfill-skipped 0");
    expect(lines[6]).toBe("errors: none");
  });

  it("status says what the last compact cost pi's process, measured while it ran", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), track(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3"]);
    await host.command("/pruner status");
    expect(host.notices.at(-1)!.message).not.toMatch(/last compact/);
    await host.command("/pruner compact");
    await host.command("/pruner status");
    const line = host.notices.at(-1)!.message.split("\n").find((text) => text.startsWith("last compact:"));
    const figures = /^last compact: 3 chains in (\d+\.\d\d) s, event loop max (\d+) ms, peak RSS (\d+) MB$/.exec(line ?? "");
    expect(figures, line).not.toBeNull();
    expect(Number(figures![3])).toBeGreaterThan(0);
    await host.command("/pruner compact");
    await host.command("/pruner status");
    expect(host.notices.at(-1)!.message).toMatch(/\nlast compact: 0 chains in /);
  });

  it("on a session file, has the workers read the chains' lines from it, and archives what `chainpress compact` archives", async () => {
    const dir = track(fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-compact-file-")));
    const host = await PiHost.start(SessionManager.create(dir, dir), track(tempAgentDir({ workers: 2 })));
    const outputs = (label: string) => [`${label} small "quoted" ünïcode ✓`, `${label} spilled\t\u0001 `.repeat(9000), `${label} kept `.repeat(300)];
    const clock = new MessageClock();
    for (const label of ["c1", "c2", "c3", "c4", "c5"]) {
      for (const message of chainMessages(clock, label, outputs(label))) await host.message(message);
      await host.endRun();
      await host.idle();
    }
    expect(blockIds(host)).toEqual(["b1", "b2"]);
    const file = host.sessionManager.getSessionFile()!;
    // The same file, compacted by the CLI's job in a folder of its own (its spill files go beside it).
    const copy = path.join(track(fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-compact-cli-"))), path.basename(file));
    fs.copyFileSync(file, copy);
    const before = fs.readFileSync(file, "utf8").split("\n").length - 1;
    await host.command("/pruner compact");
    expect(blockIds(host)).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(host.runtime.lastCompact).toMatchObject({ chains: 3, chainsFromFile: 3 });
    await host.command("/pruner status");
    expect(host.notices.at(-1)!.message).toMatch(/\nlast compact: 3 chains \(3 read from the session file\) in /);
    const runner = createChainRunner(2);
    try {
      await compactSession({ file: copy, runner });
    } finally {
      await runner.close();
    }
    const appended = (session: string) => fs.readFileSync(session, "utf8").split("\n").slice(before).filter(Boolean).map((line) => masked(JSON.parse(line).data));
    expect(appended(file)).toHaveLength(6);
    expect(appended(file)).toEqual(appended(copy));
    const spills = (session: string) => {
      const blobs = blobDirFor(path.dirname(session), host.sessionManager.getSessionId());
      return Object.fromEntries(fs.readdirSync(blobs).sort().map((name) => [name, fs.readFileSync(path.join(blobs, name), "utf8")]));
    };
    // The copy's folder holds only what the compaction spilled; pi's also holds the live flush's.
    const written = spills(copy);
    expect(Object.keys(written)).toHaveLength(3);
    expect(spills(file)).toMatchObject(written);
  });

  it("on a session file without worker threads, encodes the chains as before: their tasks run on pi's thread", async () => {
    const dir = track(fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-compact-inline-")));
    const host = await PiHost.start(SessionManager.create(dir, dir), track(tempAgentDir({ workers: 0 })));
    await playChains(host, new MessageClock(), ["c1", "c2"]);
    await host.command("/pruner compact");
    expect(blockIds(host)).toEqual(["b1", "b2"]);
    expect(host.runtime.lastCompact).toMatchObject({ chains: 2, chainsFromFile: 0 });
  });

  it("answers an unknown subcommand with the usage", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), track(tempAgentDir()));
    await host.command("/pruner frobnicate");
    expect(host.notices.at(-1)).toEqual({ message: 'pruner: unknown subcommand "frobnicate"; usage: /pruner compact | status | on | off', level: "warning" });
  });
});

describe("context_tree_query", () => {
  async function compressedHost(outputs: (label: string) => string) {
    const sessionDir = track(fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-sessions-")));
    const host = await PiHost.start(SessionManager.create(sessionDir, sessionDir), track(tempAgentDir({ workers: 0, spillThreshold: 5000 })));
    await playChains(host, new MessageClock(), ["c1", "c2"], outputs);
    await host.command("/pruner compact");
    return host;
  }
  const query = (host: PiHost, toolCallIds: string[]) => host.tools.get("context_tree_query")!.execute("q1", { toolCallIds });

  it("returns the original bytes for a tN, inline or read back from the spill file", async () => {
    const small = "small output \u00e9\u2603\nsecond line\n".repeat(30);
    const big = Array.from({ length: 300 }, (_, i) => `big line ${i} ${"z".repeat(20)}`).join("\n");
    const host = await compressedHost((label) => (label === "c1" ? small : big));
    const [record] = host.customEntries("context-prune-index")[1]!.data.toolCalls;
    expect(record.resultText).toBe("");
    expect(fs.readFileSync(record.spillPath, "utf8")).toBe(big);
    const result = await query(host, ["t1", "t2"]);
    const text = result.content[0]!.text;
    expect(text).toBe(
      [
        `## toolRef: t1\nTool: bash\nArgs: {\n  "command": "produce c1 0"\n}\nStatus: OK\nTurn: -1\n\n${small}`,
        `## toolRef: t2\nTool: bash\nArgs: {\n  "command": "produce c2 0"\n}\nStatus: OK\nTurn: -1\n\n${big}`,
      ].join("\n\n---\n\n"),
    );
    expect(Object.keys((result.details as { results: object }).results)).toEqual(["t1", "t2"]);
  });

  it("throws on unknown refs, naming them", async () => {
    const host = await compressedHost(longOutput);
    await expect(query(host, ["t99"])).rejects.toThrow("unknown ref: t99 (not found in the archive \u2014 may not have been compressed yet)");
    await expect(query(host, ["t1", "t98", "t99"])).rejects.toThrow(/^unknown refs: t98, t99 .*; ask again without them to get the other 1$/);
  });

  it("falls back to the preview when a spill file is gone", async () => {
    const host = await compressedHost((label) => `${label} `.repeat(3000));
    const [record] = host.customEntries("context-prune-index")[0]!.data.toolCalls;
    fs.rmSync(record.spillPath);
    const text = (await query(host, ["t1"])).content[0]!.text;
    expect(text).toContain(`\n\n${record.resultPreview}\n[spill file not found: ${record.spillPath}]`);
  });
});
