/**
 * Paging one archived output (core/output-pages.ts, and the first page context_tree_query gives
 * without an offset, core/query.ts): every page is an exact slice, so the pages concatenated are
 * the output byte for byte, through a 1 MB single line and a 900k-character multi-line output;
 * each page's note names exactly the offset of the next.
 */

import { describe, expect, it } from "vitest";
import { FIRST_PAGE, formatOffset, pageNote, pageOf, pageText, parseOffset, QUERY_MAX_BYTES, type OutputPage, type PagePlace } from "../src/core/output-pages.js";
import { truncatedBody } from "../src/core/query.js";

/** Every page from `from` to the end, as returned. */
function allPages(output: string, from: PagePlace = FIRST_PAGE): string[] {
  const pages: string[] = [];
  for (let place: PagePlace | null = from; place !== null; ) {
    const page = pageOf(output, place);
    if (typeof page === "string") throw new Error(page);
    expect(Buffer.byteLength(page.text, "utf8")).toBeLessThanOrEqual(QUERY_MAX_BYTES);
    pages.push(page.text);
    const note = pageNote("t1", page);
    if (page.next === null) expect(note).toMatch(/end of output\]$/);
    else expect(note).toContain(`"offset":"${formatOffset(page.next)}"`);
    place = page.next;
  }
  return pages;
}

describe("pages of an output", () => {
  it("a 1 MB single-line output reads back whole, a piece of a line per page", () => {
    const line = Array.from({ length: 1_048_576 / 16 }, (_, i) => `{"k":${String(i).padStart(9, "0")}},`).join("");
    expect(line.length).toBe(1_048_576);
    const pages = allPages(line);
    expect(pages.length).toBeGreaterThan(20);
    expect(pages.join("")).toBe(line);
    const second = pageOf(line, parseOffset(`1:${pages[0]!.length + 1}`) as PagePlace);
    expect(typeof second === "string" ? second : second.text).toBe(pages[1]);
  });

  it("a 900k-character multi-line output reads back whole, whole lines per page", () => {
    const lines = Array.from({ length: 15_000 }, (_, i) => `${String(i).padStart(6, "0")} ${"x".repeat(52)}`);
    const output = `${lines.join("\n")}\n`;
    expect(output.length).toBe(900_000);
    const pages = allPages(output);
    expect(pages.join("")).toBe(output);
    for (const page of pages.slice(0, -1)) expect(page.endsWith("\n")).toBe(true);
  });

  it("never splits a character, and keeps mixed long and short lines exact", () => {
    const output = ["short", "\u{1F600}".repeat(30_000), "é".repeat(40_000), "", "tail"].join("\n");
    expect(allPages(output).join("")).toBe(output);
    for (const page of allPages(output)) expect(page).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });

  it("the first page without an offset continues where its note says", () => {
    const output = Array.from({ length: 5_000 }, (_, i) => `line ${i}`).join("\n");
    const first = truncatedBody(output, "t7");
    const note = /\n\[Output truncated: (\d+)\/5000 lines shown; next page: context_tree_query \{"toolCallIds":\["t7"\],"offset":"(\d+):(\d+)"\}\]$/.exec(first)!;
    expect(Number(note[2])).toBe(Number(note[1]));
    // As every page: the page is the text before the line break that precedes the note.
    const head = first.slice(0, note.index);
    expect(head + allPages(output, parseOffset(`${note[2]}:${note[3]}`) as PagePlace).join("")).toBe(output);
  });

  it("the first page without an offset of an output whose first line is over a page: a piece of it, then the pages its note names", () => {
    const output = `${"\u{1F600}".repeat(20_000)}ab\n${"y".repeat(70_000)}\nend`;
    const first = truncatedBody(output, "t8");
    expect(first).toBe(pageText("t8", pageOf(output, FIRST_PAGE) as OutputPage));
    const note = /\n\[Page of t8: line 1 of 3 \(from character 1 of line 1; the page ends inside line 1\); next page: context_tree_query \{"toolCallIds":\["t8"\],"offset":"1:(\d+)"\}\]$/.exec(first)!;
    expect(Number(note[1])).toBe(2 * 12_800 + 1);
    const head = first.slice(0, note.index);
    expect(head + allPages(output, parseOffset(`1:${note[1]}`) as PagePlace).join("")).toBe(output);
  });

  it("an output that fits in one page is one page, with an end note", () => {
    const page = pageOf("a\nb", FIRST_PAGE);
    expect(page).toMatchObject({ text: "a\nb", next: null, lastLine: 2, totalLines: 2 });
    expect(pageNote("t1", page as never)).toBe("[Page of t1: lines 1-2 of 2; end of output]");
  });

  it("says what is wrong with an offset", () => {
    expect(parseOffset("12")).toEqual({ line: 12, char: 1 });
    expect(parseOffset(12)).toEqual({ line: 12, char: 1 });
    expect(parseOffset("3:40")).toEqual({ line: 3, char: 40 });
    for (const bad of ["0", "x", "1:0", "-2", "1.5", null]) expect(typeof parseOffset(bad)).toBe("string");
    expect(pageOf("a\nb", { line: 3, char: 1 })).toBe("offset 3 is past the end of the output (2 lines)");
    expect(pageOf("ab", { line: 1, char: 4 })).toBe("offset 1:4 is past the end of the output (1 line)");
  });
});
