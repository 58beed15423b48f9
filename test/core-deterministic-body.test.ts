// buildDeterministicBody against the exact grammar of UPSTREAM-FORMAT.md §4.7 (seven lines joined by
// "\n", no trailing newline), the verified example, and quirks §13.2/§13.3.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argsExcerpt, buildDeterministicBody, compareToolNames, toolHistogram, type BodyRecord } from "../src/core/deterministic-body.js";

const HEADLINE =
  "Deterministic chain compression (no per-batch summary existed for this span; raw outputs recoverable via context_tree_query).";

function rec(toolCallId: string, toolName: string, args: unknown, ts: number, resultTimestamp: number | undefined = ts): BodyRecord {
  const r: BodyRecord = { toolCallId, toolName, args, timestamp: ts };
  if (resultTimestamp !== undefined) r.resultTimestamp = resultTimestamp;
  return r;
}

function line(body: string, prefix: string): string {
  const found = body.split("\n").find((l) => l.startsWith(prefix));
  if (found === undefined) throw new Error(`no line starting with ${prefix}`);
  return found;
}

describe("buildDeterministicBody — exact grammar", () => {
  it("reproduces the verified §4.7 example byte for byte", () => {
    // Date.parse("2026-08-14T10:00:10.020Z") = 1786701610020; .040Z = 1786701610040.
    const records = [
      rec("call_0", "read", { path: "big.log" }, 1786701610020),
      rec("call_1", "bash", { command: "wc -l big.log" }, 1786701610040),
    ];
    const expected =
      "Deterministic chain compression (no per-batch summary existed for this span; raw outputs recoverable via context_tree_query).\n" +
      "Calls: 2\n" +
      "Tools: bash x1, read x1\n" +
      "Span: 2026-08-14T10:00:10.020Z -> 2026-08-14T10:00:10.040Z (0s)\n" +
      'First: read {"path":"big.log"}\n' +
      'Last: bash {"command":"wc -l big.log"}\n' +
      "Refs: t5, t6";
    expect(buildDeterministicBody(records, ["t5", "t6"])).toBe(expected);
  });

  it("full grammar pin: 3 records, bash x2 before read x1, (2s), Refs t1, t2, t3", () => {
    const t0 = Date.UTC(2026, 0, 2, 3, 4, 5, 6); // 2026-01-02T03:04:05.006Z
    const records = [
      rec("a", "bash", { command: "ls" }, t0),
      rec("b", "read", { path: "x.ts", limit: 10 }, t0 + 1000),
      rec("c", "bash", { command: "pwd" }, t0 + 2000),
    ];
    expect(buildDeterministicBody(records, ["t1", "t2", "t3"])).toBe(
      [
        HEADLINE,
        "Calls: 3",
        "Tools: bash x2, read x1",
        "Span: 2026-01-02T03:04:05.006Z -> 2026-01-02T03:04:07.006Z (2s)",
        'First: bash {"command":"ls"}',
        'Last: bash {"command":"pwd"}',
        "Refs: t1, t2, t3",
      ].join("\n"),
    );
  });

  it("has exactly seven lines and no trailing newline", () => {
    const body = buildDeterministicBody([rec("a", "bash", {}, 0)], ["t1"]);
    expect(body.split("\n")).toHaveLength(7);
    expect(body.endsWith("\n")).toBe(false);
    expect(body.split("\n")[0]).toBe(HEADLINE);
  });

  it("a single record is both First and Last, span 0s", () => {
    const body = buildDeterministicBody([rec("a", "grep", { q: "x" }, 5000)], []);
    expect(line(body, "Span: ")).toBe("Span: 1970-01-01T00:00:05.000Z -> 1970-01-01T00:00:05.000Z (0s)");
    expect(line(body, "First: ")).toBe('First: grep {"q":"x"}');
    expect(line(body, "Last: ")).toBe('Last: grep {"q":"x"}');
  });
});

describe("buildDeterministicBody — histogram", () => {
  it("ties are ordered with localeCompare: read_file, Bash, bash, readFile, Zed → bash, Bash, read_file, readFile, Zed", () => {
    // §4.7 verified example; code-point order would be `Bash, Zed, bash, readFile, read_file`.
    const names = ["read_file", "Bash", "bash", "readFile", "Zed"];
    const records = names.map((n, i) => rec(`c${i}`, n, {}, i));
    expect(line(buildDeterministicBody(records, []), "Tools: ")).toBe("Tools: bash x1, Bash x1, read_file x1, readFile x1, Zed x1");
  });

  it("count descending dominates name order", () => {
    const records = [rec("1", "alpha", {}, 1), rec("2", "zed", {}, 2), rec("3", "zed", {}, 3), rec("4", "zed", {}, 4), rec("5", "mid", {}, 5), rec("6", "mid", {}, 6)];
    expect(toolHistogram(records)).toBe("zed x3, mid x2, alpha x1");
  });

  it("ties of plain names (lowercase ASCII and digits) are ordered as by localeCompare", () => {
    const names = ["todowrite", "bash", "b", "bash2", "bash10", "a1", "edit", "read", "9", ""];
    const records = names.map((n, i) => rec(`c${i}`, n, {}, i));
    const expected = [...names].sort((a, b) => a.localeCompare(b)).map((n) => `${n} x1`).join(", ");
    expect(toolHistogram(records)).toBe(expected);
  });

  it("compareToolNames orders any two names as localeCompare does", () => {
    // Where code points and ICU disagree: case, punctuation before digits, accents.
    const pairs: Array<[string, string]> = [["a_b", "a1"], ["B", "a"], ["read-file", "read1"], ["é", "f"], ["bash", "Bash"], ["a.b", "a0"], ["ab", "a"]];
    for (const [a, b] of pairs) {
      expect(Math.sign(compareToolNames(a, b))).toBe(Math.sign(a.localeCompare(b)));
      expect(Math.sign(compareToolNames(b, a))).toBe(Math.sign(b.localeCompare(a)));
    }
    const name = fc.string({ unit: fc.constantFrom(..."abz09_-.AZé ".split("")), maxLength: 6 });
    fc.assert(
      fc.property(name, name, (a, b) => Math.sign(compareToolNames(a, b)) === Math.sign(a.localeCompare(b))),
      { numRuns: 3000 },
    );
  });

  it("Calls counts records, not distinct tools", () => {
    const records = [rec("1", "bash", {}, 1), rec("2", "bash", {}, 2)];
    expect(line(buildDeterministicBody(records, []), "Calls: ")).toBe("Calls: 2");
  });
});

describe("buildDeterministicBody — time ordering", () => {
  it("sorts and spans by resultTimestamp when it differs from timestamp", () => {
    // timestamp order says b first; resultTimestamp order says a first.
    const records = [rec("b", "bash", { n: "b" }, 1000, 9000), rec("a", "read", { n: "a" }, 2000, 3000)];
    const body = buildDeterministicBody(records, ["t1", "t2"]);
    expect(line(body, "Span: ")).toBe("Span: 1970-01-01T00:00:03.000Z -> 1970-01-01T00:00:09.000Z (6s)");
    expect(line(body, "First: ")).toBe('First: read {"n":"a"}');
    expect(line(body, "Last: ")).toBe('Last: bash {"n":"b"}');
  });

  it("falls back to timestamp when resultTimestamp is absent (legacy record)", () => {
    const records = [rec("x", "bash", { n: 2 }, 8000, undefined), rec("y", "bash", { n: 1 }, 4000, undefined)];
    const body = buildDeterministicBody(records, []);
    expect(line(body, "Span: ")).toBe("Span: 1970-01-01T00:00:04.000Z -> 1970-01-01T00:00:08.000Z (4s)");
    expect(line(body, "First: ")).toBe('First: bash {"n":1}');
  });

  it("ties keep input order (stable sort): first of equals is First, last of equals is Last", () => {
    const records = [rec("p", "one", {}, 100), rec("q", "two", {}, 100), rec("r", "three", {}, 100)];
    const body = buildDeterministicBody(records, []);
    expect(line(body, "First: ")).toBe("First: one {}");
    expect(line(body, "Last: ")).toBe("Last: three {}");
  });

  it("does not reorder the caller's array", () => {
    const records = [rec("b", "x", {}, 2), rec("a", "x", {}, 1)];
    buildDeterministicBody(records, []);
    expect(records.map((r) => r.toolCallId)).toEqual(["b", "a"]);
  });

  it("seconds are Math.round: 1499 ms → 1s, 1500 ms → 2s, 2500 ms → 3s (half rounds up), 499 → 0s", () => {
    const span = (ms: number) => line(buildDeterministicBody([rec("a", "x", {}, 0), rec("b", "x", {}, ms)], []), "Span: ").replace(/^.*\(/, "(");
    expect(span(1499)).toBe("(1s)");
    expect(span(1500)).toBe("(2s)");
    expect(span(2500)).toBe("(3s)");
    expect(span(499)).toBe("(0s)");
  });
});

describe("buildDeterministicBody — Refs line", () => {
  it("empty refs → the records' bare toolCallIds joined ', '", () => {
    const records = [rec("call_a", "bash", {}, 1), rec("call_b", "bash", {}, 2)];
    expect(line(buildDeterministicBody(records, []), "Refs: ")).toBe("Refs: call_a, call_b");
  });

  it("non-empty refs are printed as given, not replaced by ids", () => {
    const records = [rec("call_a", "bash", {}, 1), rec("call_b", "bash", {}, 2)];
    expect(line(buildDeterministicBody(records, ["t9"]), "Refs: ")).toBe("Refs: t9");
  });
});

describe("args excerpt", () => {
  it("300-char args → first 200 UTF-16 units of the JSON + '...' (203 units)", () => {
    const args = { command: "x".repeat(300) };
    const json = JSON.stringify(args);
    const excerpt = argsExcerpt(args);
    expect(excerpt).toHaveLength(203);
    expect(excerpt).toBe(`${json.slice(0, 200)}...`);
    expect(line(buildDeterministicBody([rec("a", "bash", args, 1)], []), "First: ")).toBe(`First: bash ${json.slice(0, 200)}...`);
  });

  it("JSON of exactly 200 units is not cut; 201 is", () => {
    const exact = { k: "y".repeat(200 - '{"k":""}'.length) };
    expect(JSON.stringify(exact)).toHaveLength(200);
    expect(argsExcerpt(exact)).toBe(JSON.stringify(exact));
    const over = { k: "y".repeat(201 - '{"k":""}'.length) };
    expect(argsExcerpt(over)).toBe(`${JSON.stringify(over).slice(0, 200)}...`);
  });

  it("cuts by UTF-16 units and may split a surrogate pair (quirk §13.3)", () => {
    // {"k":" is 6 units; 193 'a' → 199 units; the emoji's high surrogate is unit #200.
    const args = { k: `${"a".repeat(193)}😀tail` };
    const excerpt = argsExcerpt(args);
    expect(excerpt).toHaveLength(203);
    expect(excerpt.charCodeAt(199)).toBe(0xd83d); // lone high surrogate kept
    expect(excerpt.endsWith("\ud83d...")).toBe(true);
  });

  it("empty args {} → '{}'", () => {
    expect(line(buildDeterministicBody([rec("a", "bash", {}, 1)], []), "First: ")).toBe("First: bash {}");
  });

  it("undefined args → empty excerpt (line keeps the separating space)", () => {
    const body = buildDeterministicBody([rec("a", "bash", undefined, 1)], []);
    expect(line(body, "First: ")).toBe("First: bash ");
    expect(line(body, "Last: ")).toBe("Last: bash ");
    expect(body.split("\n")).toHaveLength(7);
  });

  it("empty-args chain still produces a non-empty body with Calls/Tools/Span lines", () => {
    const body = buildDeterministicBody([rec("a", "todo", {}, 1), rec("b", "todo", {}, 2)], []);
    expect(line(body, "Calls: ")).toBe("Calls: 2");
    expect(line(body, "Tools: ")).toBe("Tools: todo x2");
    expect(line(body, "Span: ")).toMatch(/^Span: \S+ -> \S+ \(0s\)$/);
  });

  it("uses JS JSON formatting: 1.0 → 1, key order preserved, non-ASCII unescaped", () => {
    const args = JSON.parse('{"z":1.0,"a":"héllo 漢字","m":[1.50,2e3]}');
    expect(argsExcerpt(args)).toBe('{"z":1,"a":"héllo 漢字","m":[1.5,2000]}');
  });
});
