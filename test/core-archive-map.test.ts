/**
 * The archive map under a compressed chain (core/archive-map.ts) and the call targets it names
 * (core/call-target.ts): grouped, bounded per chain and per context, spent in chain order so an
 * older chain's map never changes, and the same records always give the same bytes.
 */

import { describe, expect, it } from "vitest";
import { chainMapText, MAP_HEADER, MapAllowance, type MapCall } from "../src/core/archive-map.js";
import { callTarget } from "../src/core/call-target.js";

const read = (ref: string, path: string, failed = false): MapCall => ({ ref, toolName: "read", args: { path }, failed });
const bash = (ref: string, command: string, failed = false): MapCall => ({ ref, toolName: "bash", args: { command }, failed });

describe("callTarget", () => {
  it("names the path, the command's first line, or the pattern and where it looked", () => {
    expect(callTarget({ path: "src/a.ts", offset: 10 })).toBe("src/a.ts");
    expect(callTarget({ command: "npm test\n echo done" })).toBe("npm test …");
    expect(callTarget({ pattern: "TODO", path: "src" })).toBe("TODO in src");
    expect(callTarget({ paths: ["a.ts", "b.ts", "c.ts"] })).toBe("a.ts +2");
    expect(callTarget({ other: 3 })).toBe("");
  });
  it("keeps the file name of a long path and cuts a long command at a word", () => {
    const path = `/very/${"deep/".repeat(30)}write-queue.ts`;
    expect(callTarget({ path })).toMatch(/^…\/.*\/write-queue\.ts$/);
    expect(callTarget({ path }).length).toBeLessThanOrEqual(72);
    const command = `echo ${"word ".repeat(40)}`;
    expect(callTarget({ command }).endsWith("…")).toBe(true);
    expect(callTarget({ command }).length).toBeLessThanOrEqual(73);
  });
});

describe("chainMapText", () => {
  it("one line per target, refs in call order, failed calls marked, paths under the chain's folder", () => {
    const calls = [read("t1", "/home/u/p/src/a.ts"), bash("t2", "npm test", true), read("t3", "/home/u/p/src/a.ts"), bash("t4", "npm test"), read("t5", "/home/u/p/test/b.ts"), read("t6", "/home/u/p/src/a.ts")];
    expect(chainMapText(calls, 2_000)).toBe([MAP_HEADER, "(paths under /home/u/p/)", "t1 t3 t6 read src/a.ts", "t2! t4 bash npm test", "t5 read test/b.ts"].join("\n"));
  });

  it("a path read five times is one line", () => {
    const calls = ["t1", "t2", "t3", "t4", "t5"].map((ref) => read(ref, "src/only.ts"));
    expect(chainMapText(calls, 2_000).split("\n")).toEqual([MAP_HEADER, "t1 t2 t3 t4 t5 read src/only.ts"]);
  });

  it("stays within its budget and says how many calls it left out", () => {
    const calls = Array.from({ length: 100 }, (_, i) => read(`t${i + 1}`, `src/file-${i}.ts`));
    const text = chainMapText(calls, 600);
    const lines = text.split("\n");
    expect(text.length - lines[lines.length - 1]!.length - 1).toBeLessThanOrEqual(600);
    const listed = lines.filter((line) => /^t\d+ read /.test(line)).length;
    expect(lines[lines.length - 1]).toBe(`(${100 - listed} calls not listed; context_tree_query {"search":"text"} finds them)`);
    expect(chainMapText(calls, 10)).toBe('(no map: 100 calls not listed; context_tree_query {"search":"text"} finds them)');
  });
});

describe("MapAllowance", () => {
  it("spends the context's budget in chain order: adding a chain never changes an earlier map", () => {
    const chain = (n: number) => Array.from({ length: 20 }, (_, i) => read(`t${n * 100 + i}`, `src/c${n}/f${i}.ts`));
    const budget = { perChain: 800, total: 1_150 };
    const next = (allowance: MapAllowance, calls: MapCall[]) => allowance.next(calls.length, () => calls);
    const two = new MapAllowance(budget);
    const first = [next(two, chain(1)), next(two, chain(2))];
    const three = new MapAllowance(budget);
    const again = [next(three, chain(1)), next(three, chain(2)), next(three, chain(3))];
    expect(again.slice(0, 2)).toEqual(first);
    expect(again[2]).toMatch(/^\(no map: 20 calls not listed/);
    expect(again.join("").length).toBeLessThanOrEqual(1_150 + 200);
  });

  it("past the budget, a chain's count line is chainMapText's, and its calls are never made", () => {
    const calls = Array.from({ length: 7 }, (_, i) => read(`t${i}`, `src/f${i}.ts`));
    const spent = new MapAllowance({ perChain: 2_000, total: 0 });
    const text = spent.next(calls.length, () => {
      throw new Error("calls asked for past the budget");
    });
    expect(text).toBe(chainMapText(calls, 0));
    expect(spent.next(0, () => [])).toBe("");
  });
});
