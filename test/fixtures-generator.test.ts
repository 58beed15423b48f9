// The large-session fixture generator: deterministic bytes, valid pi v3 lines, the chain count
// chain detection finds, the features the benchmarks rely on, and the bundled default session
// being exactly what the generator makes.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildSessionContext } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_SEED, PRESETS } from "../bench/fixtures/presets.js";
import { generateSession, type GenerateSummary } from "../bench/fixtures/generate-session.js";
import { detectChains } from "../src/core/detect-chains.js";
import { makeProtectionPredicate } from "../src/core/protection.js";
import { DEFAULT_PROTECTED_PATHS } from "../src/core/defaults.js";
import type { MessageEntry, ToolResultMessage } from "../src/core/session-types.js";
import { branchMessages, buildBranch, contextMessages } from "../src/core/session-tree.js";
import { readSession } from "../src/io/read-session.js";

const BUNDLED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "large-sessions", "default-session.jsonl");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-fixtures-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function generate(seed: number, name = "default"): { file: string; summary: GenerateSummary } {
  const file = path.join(dir, `${name}-${seed}-${Math.random().toString(16).slice(2)}.jsonl`);
  return { file, summary: generateSession(PRESETS[name]!, seed, file) };
}

const first = generate(DEFAULT_SEED);
const lines = fs.readFileSync(first.file, "utf8").split("\n");

describe("fixture generator: determinism", () => {
  it("writes byte-identical files for the same preset and seed", () => {
    expect(fs.readFileSync(generate(DEFAULT_SEED).file).equals(fs.readFileSync(first.file))).toBe(true);
  });

  it("writes a different session for a different seed", () => {
    expect(fs.readFileSync(generate(DEFAULT_SEED + 1).file).equals(fs.readFileSync(first.file))).toBe(false);
  });

  it("bundles exactly what the generator makes for the default preset", () => {
    expect(fs.readFileSync(BUNDLED).equals(fs.readFileSync(first.file))).toBe(true);
  });

  it("reports the bytes and lines it wrote", () => {
    expect(first.summary.bytes).toBe(fs.statSync(first.file).size);
    expect(first.summary.lines).toBe(lines.length - 1);
  });
});

describe("fixture generator: valid pi v3 lines", () => {
  const entries = lines.slice(1, -1).map((line) => JSON.parse(line) as Record<string, any>);

  it("every line parses; the file ends with a newline; the header is version 3", () => {
    expect(lines.at(-1)).toBe("");
    const header = JSON.parse(lines[0]!);
    expect(Object.keys(header)).toEqual(["type", "version", "id", "timestamp", "cwd"]);
    expect(header).toMatchObject({ type: "session", version: 3 });
  });

  it("entries have unique 8-hex ids, known parents and ISO timestamps in file order", () => {
    const seen = new Set<string>();
    let previous = "";
    for (const entry of entries) {
      expect(entry.id).toMatch(/^[0-9a-f]{8}$/);
      expect(seen.has(entry.id)).toBe(false);
      if (entry.parentId !== null) expect(seen.has(entry.parentId)).toBe(true);
      seen.add(entry.id);
      expect(new Date(entry.timestamp).toISOString()).toBe(entry.timestamp);
      expect(entry.timestamp >= previous).toBe(true);
      previous = entry.timestamp;
    }
  });

  it("message timestamps strictly increase, so no two user or assistant messages share one", () => {
    const stamps = entries.filter((e) => e.type === "message").map((e) => e.message.timestamp as number);
    stamps.forEach((t, i) => i > 0 && expect(t).toBeGreaterThan(stamps[i - 1]!));
  });

  it("pi's own buildSessionContext reads the session as chainpress does", () => {
    const loaded = buildSessionContext(entries as never).messages;
    expect(loaded.length).toBe(contextMessages(buildBranch(entries as never)).length);
  });
});

describe("fixture generator: chains and features", () => {
  it("chain detection finds exactly the generator's closed chains, for every small preset", async () => {
    for (const name of ["default", "one-640"]) {
      const { file, summary } = generate(DEFAULT_SEED, name);
      const messages = branchMessages(buildBranch((await readSession(file)).entries));
      const chains = detectChains(messages);
      expect(chains.filter((c) => c.finalAssistantTimestamp !== null).length).toBe(summary.chains);
      expect(chains.length).toBe(summary.chains);
      expect(chains.reduce((n, c) => n + c.middleOccurrenceKeys.length, 0)).toBe(summary.toolCalls);
    }
  });

  it("the default session has every feature the benchmarks rely on", async () => {
    const loaded = await readSession(first.file);
    const branch = buildBranch(loaded.entries);
    const results = branchMessages(branch).filter((m): m is ToolResultMessage => m.role === "toolResult");
    const texts = results.map((r) => (r.content as Array<{ text: string }>)[0]!.text);
    expect(texts.filter((t) => t.length >= 65536).length).toBe(first.summary.spillable);
    expect(first.summary.spillable).toBeGreaterThanOrEqual(3);
    expect(results.some((r) => r.isError)).toBe(true);
    expect(texts.some((t) => /[^\u0000-\u007f]/.test(t))).toBe(true);
    expect(branch.length).toBeLessThan(loaded.entries.length); // an abandoned sibling branch
    const chains = detectChains(branchMessages(branch), makeProtectionPredicate({ protectedTools: [], protectedPaths: DEFAULT_PROTECTED_PATHS }));
    expect(chains.filter((c) => c.protectedToolCallIds.length > 0).length).toBe(first.summary.protectedReads);
    const idsPerChain = chains.map((c) => new Set(c.middleToolCallIds));
    const reused = [...idsPerChain[1]!].filter((id) => idsPerChain.slice(2).some((ids) => ids.has(id)));
    expect(reused.length).toBeGreaterThan(0); // numbered tool-call ids repeat across chains
    const assistants = branch.filter((e) => e.type === "message" && (e as MessageEntry).message.role === "assistant");
    expect(assistants.some((e) => JSON.stringify((e as MessageEntry).message.content).includes('"type":"thinking"'))).toBe(true);
  });

  it("sizes the large presets as the issue asks", () => {
    const chars = (name: string) => PRESETS[name]!.chains.reduce((n, c) => n + c.chars, 0);
    expect(PRESETS["one-640"]!.chains).toHaveLength(1);
    expect(PRESETS["one-640"]!.chains[0]!.calls).toBe(640);
    expect(chars("one-640")).toBe(1_000_000);
    expect(PRESETS["20x1M"]!.chains).toHaveLength(20);
    expect(chars("20x1M")).toBe(20_000_000);
    expect(PRESETS["200x1M"]!.chains).toHaveLength(200);
    expect(chars("200x1M")).toBe(200_000_000);
  });

  it("hits the requested result characters of a 1M chain within 5%", () => {
    const { summary } = generate(DEFAULT_SEED, "one-640");
    expect(summary.toolCalls).toBe(640);
    expect(Math.abs(summary.resultChars / 1_000_000 - 1)).toBeLessThan(0.05);
  });
});
