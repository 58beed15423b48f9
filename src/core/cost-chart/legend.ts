import type { EventGroup } from "./events.js";
import { PLOT_LEFT, PLOT_RIGHT } from "./layout.js";
import { clip, xmlText } from "./xml.js";

export interface LegendItem {
  label: string;
  colour: string;
  kind: "line" | "mark";
}

/** Rough advance of one character at the legend's font size, to place the next item. */
const CHAR_WIDTH = 6.6;
const SWATCH = 22;
const GAP = 18;

/** The legend on one row at `y`, items left to right; an item that would pass the plot's right edge is left out. */
export function drawLegend(items: readonly LegendItem[], y: number): string[] {
  const out: string[] = [];
  let x = PLOT_LEFT;
  for (const item of items) {
    const label = clip(item.label, 48);
    const width = SWATCH + 6 + Array.from(label).length * CHAR_WIDTH;
    if (x + width > PLOT_RIGHT) break;
    out.push(item.kind === "line"
      ? `<line x1="${x}" y1="${y - 4}" x2="${x + SWATCH}" y2="${y - 4}" stroke="${item.colour}" stroke-width="2.5"/>`
      : `<line x1="${x + SWATCH / 2}" y1="${y - 11}" x2="${x + SWATCH / 2}" y2="${y + 3}" stroke="${item.colour}" stroke-width="1.5"/>`);
    out.push(`<text x="${x + SWATCH + 6}" y="${y}" font-size="12">${xmlText(label)}</text>`);
    x += width + GAP;
  }
  return out;
}

export function eventLegendLabel(group: EventGroup): string {
  return `${group.label} (${group.count})`;
}
