// Protection predicate (UPSTREAM-FORMAT.md §4.1): tool-name membership, else `args.path` (string,
// backslashes → `/`) fully matching a glob. Glob → regex: `**/` = zero or more whole directories
// `(?:[^/]*/)*`, bare `**` = `.*`, `*` = `[^/]*`, `?` = `[^/]`, everything else literal, anchored.
import { describe, expect, it } from "vitest";
import { globToRegExp, makeProtectionPredicate } from "../src/core/protection.js";

const skills = "**/skills/**/*.md"; // upstream's default protectedPaths entry (§9.1)

function pathProtected(glob: string, path: string): boolean {
  return makeProtectionPredicate({ protectedTools: [], protectedPaths: [glob] })("read", { path });
}

describe("globToRegExp", () => {
  it("translates `**/` to zero-or-more whole directories, `*` to one segment", () => {
    // Compare through new RegExp(...).source because .source escapes "/".
    expect(globToRegExp(skills).source).toBe(new RegExp("^(?:[^/]*/)*skills/(?:[^/]*/)*[^/]*\\.md$").source);
  });

  it("bare `**` (not followed by /) becomes `.*`", () => {
    expect(globToRegExp("a/**").source).toBe(new RegExp("^a/.*$").source);
  });
});

describe("default skills glob `**/skills/**/*.md`", () => {
  it("matches a/skills/x/SKILL.md (one leading dir, one inner dir)", () => {
    expect(pathProtected(skills, "a/skills/x/SKILL.md")).toBe(true);
  });

  it("matches skills/x/y.md (`**/` = ZERO leading directories)", () => {
    expect(pathProtected(skills, "skills/x/y.md")).toBe(true);
  });

  it("matches skills/y.md (zero directories after skills/ too)", () => {
    expect(pathProtected(skills, "skills/y.md")).toBe(true);
  });

  it("matches an absolute path (/home/u/.pi/skills/a/b/c.md): `[^/]*` may be empty before the first /", () => {
    expect(pathProtected(skills, "/home/u/.pi/skills/a/b/c.md")).toBe(true);
  });

  it("matches deep nesting on both sides", () => {
    expect(pathProtected(skills, "p/q/r/skills/s/t/u/v.md")).toBe(true);
  });

  it("does not match a segment that merely ends in skills (myskills/)", () => {
    // `(?:[^/]*/)*` consumes whole dirs only, so `skills/` must start a segment.
    expect(pathProtected(skills, "a/myskills/x.md")).toBe(false);
  });

  it("does not match a non-.md file", () => {
    expect(pathProtected(skills, "a/skills/x/SKILL.mdx")).toBe(false);
    expect(pathProtected(skills, "a/skills/x/SKILL.txt")).toBe(false);
  });

  it("is anchored: a prefix or suffix around a match does not count", () => {
    expect(pathProtected("skills/*.md", "x/skills/a.md")).toBe(false);
    expect(pathProtected("skills/*.md", "skills/a.md.bak")).toBe(false);
  });

  it("backslash paths are normalised to / before matching", () => {
    expect(pathProtected(skills, "C:\\repo\\skills\\x\\SKILL.md")).toBe(true);
    expect(pathProtected(skills, "a\\skills\\y.md")).toBe(true);
  });
});

describe("single-segment wildcards", () => {
  it("`*` does not cross /", () => {
    expect(pathProtected("src/*.ts", "src/a.ts")).toBe(true);
    expect(pathProtected("src/*.ts", "src/sub/a.ts")).toBe(false);
  });

  it("`*` may match the empty string", () => {
    expect(pathProtected("src/*.ts", "src/.ts")).toBe(true);
  });

  it("`?` matches exactly one non-/ character", () => {
    expect(pathProtected("a?c", "abc")).toBe(true);
    expect(pathProtected("a?c", "ac")).toBe(false);
    expect(pathProtected("a?c", "abbc")).toBe(false);
    expect(pathProtected("a?c", "a/c")).toBe(false);
  });

  it("bare `**` crosses /", () => {
    expect(pathProtected("docs/**", "docs/a/b/c.txt")).toBe(true);
    expect(pathProtected("docs/**", "docs/")).toBe(true);
  });
});

describe("regex metacharacters are literal", () => {
  it("`.` is a literal dot, not any char", () => {
    expect(pathProtected("a.md", "a.md")).toBe(true);
    expect(pathProtected("a.md", "aXmd")).toBe(false);
  });

  it("+ ( ) | [ ] { } ^ $ are literal", () => {
    const glob = "f+(x)|[y]{2}^$.txt";
    expect(pathProtected(glob, "f+(x)|[y]{2}^$.txt")).toBe(true);
    expect(pathProtected(glob, "ff(x)|[y]{2}^$.txt")).toBe(false);
    expect(pathProtected("[ab].md", "a.md")).toBe(false);
    expect(pathProtected("[ab].md", "[ab].md")).toBe(true);
  });

  it("a literal backslash in the glob does not escape the next char", () => {
    // The path side is normalised (\ → /), the glob side is not: `a\*` is literal `a\` + `[^/]*`.
    const re = globToRegExp("a\\*");
    expect(re.test("a\\xyz")).toBe(true);
    expect(re.test("a*")).toBe(false);
  });
});

describe("makeProtectionPredicate", () => {
  it("protects by tool name regardless of args", () => {
    const p = makeProtectionPredicate({ protectedTools: ["todowrite"], protectedPaths: [] });
    expect(p("todowrite", undefined)).toBe(true);
    expect(p("todowrite", { path: "whatever" })).toBe(true);
  });

  it("tool-name match is exact (case-sensitive)", () => {
    const p = makeProtectionPredicate({ protectedTools: ["todowrite"], protectedPaths: [] });
    expect(p("TodoWrite", undefined)).toBe(false);
    expect(p("todowrite2", undefined)).toBe(false);
  });

  it("no globs → path never protects", () => {
    const p = makeProtectionPredicate({ protectedTools: [], protectedPaths: [] });
    expect(p("read", { path: "a/skills/x/SKILL.md" })).toBe(false);
  });

  it("ignores a non-string path and missing/undefined args", () => {
    const p = makeProtectionPredicate({ protectedTools: [], protectedPaths: ["**"] });
    expect(p("read", { path: 5 })).toBe(false);
    expect(p("read", {})).toBe(false);
    expect(p("read", undefined)).toBe(false);
    expect(p("read", null)).toBe(false);
  });

  it("reads only `path` (not file_path / filePath)", () => {
    const p = makeProtectionPredicate({ protectedTools: [], protectedPaths: [skills] });
    expect(p("read", { file_path: "a/skills/x/SKILL.md" })).toBe(false);
    expect(p("read", { filePath: "a/skills/x/SKILL.md" })).toBe(false);
  });

  it("any of several globs suffices", () => {
    const p = makeProtectionPredicate({ protectedTools: [], protectedPaths: ["*.lock", skills] });
    expect(p("read", { path: "pnpm.lock" })).toBe(true);
    expect(p("read", { path: "a/skills/b.md" })).toBe(true);
    expect(p("read", { path: "a/b.md" })).toBe(false);
  });
});

describe("remembered verdicts", () => {
  it("answer as the globs do, for paths asked again, past the number it remembers, and with backslashes", () => {
    const config = { protectedTools: [], protectedPaths: ["**/skills/**/*.md", "secrets/*"] };
    const remembering = makeProtectionPredicate(config);
    const globs = config.protectedPaths.map(globToRegExp);
    const paths = Array.from({ length: 6000 }, (_, i) => (i % 3 === 0 ? `a/skills/x${i}.md` : i % 3 === 1 ? `secrets\\k${i}` : `src/f${i}.ts`));
    for (const round of [0, 1]) {
      for (const path of round === 0 ? paths : [...paths].reverse()) {
        const expected = globs.some((re) => re.test(path.replace(/\\/g, "/")));
        expect(remembering("read", { path })).toBe(expected);
      }
    }
  });
});
