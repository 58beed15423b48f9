// costChartSvg: a well-formed, self-contained, deterministic SVG of a replay, small at 100k requests.
import { describe, expect, it } from "vitest";
import { CostChartInputError, costChartSvg, type CostChartInput } from "../src/core/cost-chart.js";
import { allElements, parseStrictXml, type XmlElement } from "./helpers/strict-xml.js";

/** A replay-shaped input: as run grows to a pi compaction, chainpress compresses every `every` requests. */
function replay(requests: number, every = 9, title = "session.jsonl"): CostChartInput {
  const asRun: number[] = [], chainpress: number[] = [], asUsd: number[] = [], cpUsd: number[] = [];
  const events: Array<{ request: number; label: string }> = [];
  let a = 12_000, c = 12_000, ua = 0, uc = 0;
  for (let i = 0; i < requests; i++) {
    a = a > 180_000 ? 30_000 : a + 700 + (i % 7) * 130;
    c += 700 + (i % 7) * 130;
    if (i % every === every - 1) {
      c = 30_000 + (c - 30_000) * 0.4;
      events.push({ request: i, label: "compression" });
    }
    asRun.push(a);
    chainpress.push(c);
    asUsd.push((ua += a * 3e-7 + 0.004));
    cpUsd.push((uc += c * 3e-7 + 0.004));
  }
  return {
    title,
    cacheTtlLabel: "5m",
    runs: [{ label: "as run", promptTokens: asRun, cumulativeUsd: asUsd }, { label: "chainpress", promptTokens: chainpress, cumulativeUsd: cpUsd }],
    events,
  };
}

function texts(root: XmlElement): string[] {
  return allElements(root).filter((e) => e.name === "text" || e.name === "title").map((e) => e.text);
}

function polylines(root: XmlElement): string[][] {
  return allElements(root).filter((e) => e.name === "polyline").map((e) => e.attributes.get("points")!.split(" "));
}

describe("the strict XML reader the chart's tests rely on", () => {
  it("reads a document and refuses what is not well-formed", () => {
    const root = parseStrictXml(`<svg xmlns="x"><text a='1'>a &amp; b &#x3C;</text><g/></svg>`);
    expect(root.children.map((c) => c.name)).toEqual(["text", "g"]);
    expect(root.children[0]!.text).toBe("a & b <");
    for (const bad of ["<svg><g></svg>", "<svg a=1/>", "<svg>a & b</svg>", "<svg>a > b</svg>", "<svg/><svg/>", "<svg a=\"<\"/>", "<svg a=\"1\"a=\"2\"/>", "<svg>", "text<svg/>", "<svg a=\"1\" a=\"2\"/>"]) {
      expect(() => parseStrictXml(bad), bad).toThrow(/XML at offset/);
    }
  });
});

describe("costChartSvg", () => {
  it("writes one <svg> root with the SVG namespace, both panels, a legend and the cache lifetime", () => {
    const svg = costChartSvg(replay(484));
    const root = parseStrictXml(svg);
    expect(root.name).toBe("svg");
    expect(root.attributes.get("xmlns")).toBe("http://www.w3.org/2000/svg");
    const all = texts(root);
    for (const t of ["session.jsonl", "as run", "chainpress", "compression (53)", "Prompt tokens per request", "Cumulative bill (US dollars)", "request"]) expect(all).toContain(t);
    expect(all.some((t) => t.includes("484 requests") && t.includes("prompt cache lifetime 5m"))).toBe(true);
    expect(polylines(root)).toHaveLength(4);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  it("labels ticks with thousands separators and dollars with cents", () => {
    const all = texts(parseStrictXml(costChartSvg(replay(40_000))));
    expect(all).toContain("200,000");
    expect(all).toContain("20,000");
    expect(all).toContain("$0.00");
    const dollars = all.filter((t) => t.startsWith("$"));
    expect(dollars.length).toBeGreaterThan(2);
    for (const d of dollars) expect(d).toMatch(/^\$\d{1,3}(,\d{3})*\.\d{2}$/);
    expect(dollars.some((d) => d.includes(","))).toBe(true);
  });

  it("is self-contained: no script, style, image, link or foreign content, no reference outside", () => {
    const svg = costChartSvg(replay(2_000));
    for (const e of allElements(parseStrictXml(svg))) {
      expect(["script", "style", "image", "a", "use", "foreignObject", "iframe", "link"]).not.toContain(e.name);
      for (const [name, value] of e.attributes) {
        expect(name).not.toMatch(/href$|^on/i);
        if (name !== "xmlns") expect(value).not.toMatch(/url\(|https?:|data:|javascript:/i);
      }
    }
    expect(svg).toContain('font-family="sans-serif"');
  });

  it("gives the same bytes for the same input", () => {
    expect(costChartSvg(replay(3_000))).toBe(costChartSvg(structuredClone(replay(3_000))));
  });

  it("stays under 200 KB at 100k requests with thousands of events, keeping each series' peaks", () => {
    const input = replay(100_000, 7);
    const spike = 54_321;
    const tokens = [...input.runs[1]!.promptTokens];
    tokens[spike] = 900_000;
    const svg = costChartSvg({ ...input, runs: [input.runs[0]!, { ...input.runs[1]!, promptTokens: tokens }] });
    expect(svg.length).toBeLessThan(200_000);
    const root = parseStrictXml(svg);
    for (const points of polylines(root)) expect(points.length).toBeLessThanOrEqual(2 * 880 + 2);
    expect(texts(root)).toContain("compression (14285)");
    expect(texts(root).length).toBeLessThan(60);
    // The spike is the panel's highest point: the chainpress tokens line reaches above every as-run point.
    const ys = (points: string[]) => points.map((p) => Number(p.split(",")[1]));
    const [asRun, chainpress] = polylines(root);
    expect(Math.min(...ys(chainpress!))).toBeLessThan(Math.min(...ys(asRun!)) - 100);
  });

  it("escapes every text it prints and replaces characters XML cannot hold", () => {
    const input = replay(50);
    const title = `a<b>&"c'\u0001d\uD800.jsonl`;
    const svg = costChartSvg({
      ...input,
      title,
      cacheTtlLabel: `<1h&>`,
      runs: [{ ...input.runs[0]!, label: `<script>alert("x")</script>` }, input.runs[1]!],
      events: input.events.map((e) => ({ ...e, label: `A & <B>` })),
    });
    expect(svg).not.toContain("<script");
    const root = parseStrictXml(svg);
    const all = texts(root);
    expect(all).toContain(`a<b>&"c'\uFFFDd\uFFFD.jsonl`);
    expect(all).toContain(`<script>alert("x")</script>`);
    expect(all).toContain(`A & <B> (5)`);
    expect(all.some((t) => t.endsWith("prompt cache lifetime <1h&>"))).toBe(true);
  });

  it("draws 0 and 1 requests, all zeros and a single run", () => {
    const empty = parseStrictXml(costChartSvg({ title: "t", cacheTtlLabel: "5m", runs: [{ label: "as run", promptTokens: [], cumulativeUsd: [] }], events: [] }));
    expect(texts(empty)).toContain("no requests");
    expect(texts(empty).some((t) => t.startsWith("0 requests"))).toBe(true);

    const one = costChartSvg({ title: "t", cacheTtlLabel: "1h", runs: [{ label: "as run", promptTokens: [1234], cumulativeUsd: [0.5] }], events: [{ request: 0, label: "compression" }] });
    const oneRoot = parseStrictXml(one);
    expect(allElements(oneRoot).filter((e) => e.name === "circle")).toHaveLength(2);
    expect(texts(oneRoot).some((t) => t.startsWith("1 request ·"))).toBe(true);

    const zeros = costChartSvg({ title: "t", cacheTtlLabel: "5m", runs: [{ label: "a", promptTokens: [0, 0, 0], cumulativeUsd: [0, 0, 0] }, { label: "b", promptTokens: [0, 0, 0], cumulativeUsd: [0, 0, 0] }], events: [] });
    const zeroRoot = parseStrictXml(zeros);
    expect(polylines(zeroRoot)).toHaveLength(4);
    expect(texts(zeroRoot)).toContain("$0.01");

    const single = replay(300);
    const singleRoot = parseStrictXml(costChartSvg({ ...single, runs: [single.runs[0]!] }));
    expect(polylines(singleRoot)).toHaveLength(2);
    for (const svg of [one, zeros]) expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  it("puts events into one legend entry when they carry more labels than it has colours", () => {
    const input = replay(400);
    const root = parseStrictXml(costChartSvg({ ...input, events: input.events.map((e, i) => ({ ...e, label: `compression ${i}` })) }));
    expect(texts(root)).toContain(`compression (${input.events.length})`);
    expect(texts(root).filter((t) => t.startsWith("compression"))).toHaveLength(1);
  });

  it("refuses non-finite, negative and ragged series and events outside the requests, naming the field", () => {
    const base = replay(10);
    const withTokens = (values: number[]) => ({ ...base, runs: [base.runs[0]!, { ...base.runs[1]!, promptTokens: values }] });
    const cases: Array<[CostChartInput, RegExp]> = [
      [withTokens([...base.runs[1]!.promptTokens.slice(0, 3), Number.NaN, ...base.runs[1]!.promptTokens.slice(4)]), /runs\[1\]\.promptTokens\[3\]: NaN is not a finite number/],
      [{ ...base, runs: [{ ...base.runs[0]!, cumulativeUsd: [...base.runs[0]!.cumulativeUsd.slice(0, 9), Number.POSITIVE_INFINITY] }] }, /runs\[0\]\.cumulativeUsd\[9\]: Infinity is not a finite number/],
      [withTokens([-1, ...base.runs[1]!.promptTokens.slice(1)]), /runs\[1\]\.promptTokens\[0\]: -1 is negative/],
      [withTokens([1, 2]), /runs\[1\]\.promptTokens: 2 values, but runs\[0\]\.promptTokens has 10/],
      [{ ...base, events: [{ request: 10, label: "c" }] }, /events\[0\]\.request: 10 is not a request index in \[0, 10\)/],
      [{ ...base, events: [{ request: 1.5, label: "c" }] }, /events\[0\]\.request/],
      [{ ...base, runs: [] }, /runs: at least one run/],
    ];
    for (const [input, message] of cases) {
      expect(() => costChartSvg(input)).toThrow(CostChartInputError);
      expect(() => costChartSvg(input)).toThrow(message);
    }
  });
});

describe("costChartSvg's geometry", () => {
  it("writes no negative width or height, with or without events", () => {
    const input = replay(30);
    for (const events of [[], input.events]) {
      for (const e of allElements(parseStrictXml(costChartSvg({ ...input, events })))) {
        for (const name of ["width", "height", "r"]) if (e.attributes.has(name)) expect(Number(e.attributes.get(name)), `${e.name} ${name}`).toBeGreaterThan(0);
      }
    }
  });
});
