import { describe, expect, it } from "vitest";
import { PruneState } from "../src/core/prune-state.js";
import type { ToolCallRecord } from "../src/core/prune-types.js";
import { FIRST_PAGE, pageOf, pageText, type OutputPage } from "../src/core/output-pages.js";
import { findRecords, formatQueryResult, queryDetails, truncatedBody, unavailableSpillBody } from "../src/core/query.js";

// --- local factories -------------------------------------------------------------------------
const record = (id: string, resultTimestamp: number | undefined, extra: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  toolCallId: id,
  toolName: "read",
  args: { path: "a.txt" },
  resultText: `text of ${id}@${resultTimestamp}`,
  isError: false,
  turnIndex: 2,
  timestamp: resultTimestamp ?? 1,
  ...(resultTimestamp === undefined ? {} : { resultTimestamp }),
  ...extra,
});

function stateWith(...records: ToolCallRecord[]): PruneState {
  const state = new PruneState();
  for (const r of records) state.indexRecord(r, { seedDedup: true });
  return state;
}

const labels = (state: PruneState, input: string) => findRecords(state, input).map((m) => m.label);
const render = (state: PruneState, input: string) => {
  const matches = findRecords(state, input);
  return formatQueryResult(input, matches, matches.map((m) => m.record.resultText));
};

describe("findRecords", () => {
  it("resolves a short ref to its occurrence and prints the exact block", () => {
    const state = stateWith(record("c1", 1000), record("c1", 2000));
    state.registerRef({ shortId: "t3", toolCallId: "c1", resultTimestamp: 2000 });
    expect(labels(state, "t3")).toEqual(["t3"]);
    expect(render(state, "t3")).toBe('## toolRef: t3\nTool: read\nArgs: {\n  "path": "a.txt"\n}\nStatus: OK\nTurn: 2\n\ntext of c1@2000');
  });

  it("lists every occurrence of a bare id, oldest first, labelled id@ts", () => {
    const state = stateWith(record("c1", 2000), record("c1", 1000));
    expect(labels(state, "c1")).toEqual(["c1@1000", "c1@2000"]);
    expect(render(state, "c1")).toBe(
      '## toolRef: c1@1000\nTool: read\nArgs: {\n  "path": "a.txt"\n}\nStatus: OK\nTurn: 2\n\ntext of c1@1000' +
        "\n\n---\n\n" +
        '## toolRef: c1@2000\nTool: read\nArgs: {\n  "path": "a.txt"\n}\nStatus: OK\nTurn: 2\n\ntext of c1@2000',
    );
  });

  it("labels a single occurrence of a bare id with the input itself", () => {
    expect(labels(stateWith(record("c1", 1000)), "c1")).toEqual(["c1"]);
  });

  it("resolves an exact occurrence key to that record only", () => {
    const state = stateWith(record("c1", 1000), record("c1", 2000));
    const matches = findRecords(state, "c1@2000");
    expect(matches).toEqual([{ label: "c1@2000", record: state.records.get("c1@2000"), legacy: false }]);
  });

  it("follows dedup aliases: by alias key, and as extra occurrences of the alias's bare id", () => {
    const state = stateWith(record("c1", 1000), record("c1", 2000), record("orig", 500, { toolName: "bash" }));
    state.registerDedupAlias("c1@3000", "orig@500");
    state.registerDedupAlias("dup@4000", "orig@500");
    expect(findRecords(state, "dup@4000").map((m) => m.record)).toEqual([state.records.get("orig@500")]);

    const viaBareId = findRecords(state, "c1");
    expect(viaBareId.map((m) => m.label)).toEqual(["c1@1000", "c1@2000", "c1@3000"]);
    // The alias occurrence shows the original's output under its own timestamp.
    expect(viaBareId[2]!.record.toolName).toBe("bash");
    expect(viaBareId[2]!.record.resultTimestamp).toBe(3000);
    expect(state.records.get("orig@500")!.resultTimestamp).toBe(500); // original untouched
    expect(findRecords(state, "dup").map((m) => m.record.resultTimestamp)).toEqual([4000]);
  });

  it("marks a legacy record among several occurrences", () => {
    const state = stateWith(record("c5", undefined, { timestamp: 500 }), record("c5", 900));
    const matches = findRecords(state, "c5");
    expect(matches.map((m) => [m.label, m.legacy])).toEqual([
      ["c5", true],
      ["c5@900", false],
    ]);
    expect(formatQueryResult("c5", matches, ["L", "M"]).split("\n").slice(0, 3)).toEqual([
      "## toolRef: c5",
      "Occurrence: legacy (no resultTimestamp)",
      "Tool: read",
    ]);
  });

  it("returns nothing for an unknown input", () => {
    expect(findRecords(stateWith(record("c1", 1)), "t99")).toEqual([]);
  });
});

describe("formatQueryResult", () => {
  it("prints the not-found text with an EM DASH", () => {
    expect(formatQueryResult("t99", [], [])).toBe("## toolRef: t99\n(not found in index — may not have been summarized yet)");
  });

  it("prints Turn: -1 for backfilled records and ERROR for failed calls", () => {
    const state = stateWith(record("b1", 1000, { turnIndex: -1, isError: true, args: {} }));
    expect(render(state, "b1")).toBe("## toolRef: b1\nTool: read\nArgs: {}\nStatus: ERROR\nTurn: -1\n\ntext of b1@1000");
  });

  it("builds details keyed by label", () => {
    const state = stateWith(record("c1", 1000), record("c1", 2000));
    expect(Object.keys(queryDetails(findRecords(state, "c1")).results)).toEqual(["c1@1000", "c1@2000"]);
  });

  it("shows the preview, or a fixed note, when a spill file is unavailable", () => {
    expect(unavailableSpillBody(record("s", 1, { resultPreview: "head" }))).toBe("head");
    expect(unavailableSpillBody(record("s", 1))).toBe("(spilled output unavailable — sidecar file missing)");
  });
});

describe("head truncation", () => {
  it("keeps 2000 lines and notes how many were shown", () => {
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i}`);
    const out = truncatedBody(lines.join("\n"));
    expect(out).toBe(`${lines.slice(0, 2000).join("\n")}\n[Output truncated: 2000/2500 lines shown]`);
  });

  it("cuts at 51200 bytes on a whole line", () => {
    // 600 lines of 100 bytes: the first costs 100, each later one 101 (its newline).
    // 100 + 505 * 101 = 51105 fits; one more line would be 51206 > 51200, so 506 lines show.
    const lines = Array.from({ length: 600 }, (_, i) => String(i).padStart(100, "x"));
    const out = truncatedBody(lines.join("\n"));
    expect(out).toBe(`${lines.slice(0, 506).join("\n")}\n[Output truncated: 506/600 lines shown]`);
  });

  it("counts bytes, not UTF-16 units", () => {
    const text = "é".repeat(30_000); // 60000 bytes on one line, over the limit by itself
    expect(truncatedBody(text)).toBe("\n[Output truncated: 0/1 lines shown]");
    expect(truncatedBody("é".repeat(25_600))).toBe("é".repeat(25_600)); // exactly 51200 bytes
  });

  it("a first line alone over the byte limit: with a ref, the first page holds a piece of it, as offset 1 gives it", () => {
    const single = "é".repeat(30_000);
    const body = truncatedBody(single, "t3");
    expect(body).toBe(pageText("t3", pageOf(single, FIRST_PAGE) as OutputPage));
    expect(body).toBe(`${"é".repeat(25_600)}\n[Page of t3: line 1 of 1 (from character 1 of line 1; the page ends inside line 1); next page: context_tree_query {"toolCallIds":["t3"],"offset":"1:25601"}]`);
    const lines = `${"x".repeat(60_000)}\nsecond\nthird`;
    expect(truncatedBody(lines, "t4")).toBe(`${"x".repeat(51_200)}\n[Page of t4: line 1 of 3 (from character 1 of line 1; the page ends inside line 1); next page: context_tree_query {"toolCallIds":["t4"],"offset":"1:51201"}]`);
    const state = stateWith(record("c1", 1000));
    expect(formatQueryResult("c1", findRecords(state, "c1"), [lines]).endsWith(`\n\n${truncatedBody(lines, "c1")}`)).toBe(true);
  });

  it("applies the truncation to each block of a query", () => {
    const state = stateWith(record("c1", 1000));
    const body = Array.from({ length: 2001 }, () => "x").join("\n");
    // pi's note, with what to pass for the next page: the line break that ends line 2000.
    expect(formatQueryResult("c1", findRecords(state, "c1"), [body]).endsWith('\n[Output truncated: 2000/2001 lines shown; next page: context_tree_query {"toolCallIds":["c1"],"offset":"2000:2"}]')).toBe(true);
  });
});
