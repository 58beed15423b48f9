/** Markdown tables for the console and RESULTS.md. Pure. */

export type Cell = string | number;

/** Numbers get `digits` decimals; columns are padded so the console output lines up. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly Cell[])[], digits = 1): string {
  const text = rows.map((row) => row.map((cell) => (typeof cell === "number" ? formatNumber(cell, digits) : cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((row) => row[i]?.length ?? 0)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...text.map(line)].join("\n");
}

export function formatNumber(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "-";
  return value.toFixed(Math.abs(value) >= 100 ? 0 : digits);
}
