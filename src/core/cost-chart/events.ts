import { EVENT_COLOURS, PLOT_LEFT, PLOT_RIGHT, requestX, type Panel } from "./layout.js";
import { coord } from "./xml.js";

export interface EventGroup {
  label: string;
  colour: string;
  count: number;
  requests: number[];
}

/** Labels beyond which events share one legend entry instead of one per label. */
const MAX_LABELS = EVENT_COLOURS.length;
/** Height of one group's row of marks in the strip above the plot. */
export const RUG_ROW = 7;
/** Marked columns up to which events are also drawn across the whole plot; beyond, the lines would fill it. */
const MAX_FULL_MARKS = 200;

/**
 * Events grouped by label in order of first appearance, one colour each; when there are more
 * distinct labels than colours, every event goes into one group named `fallback`.
 */
export function groupEvents(events: ReadonlyArray<{ request: number; label: string }>, fallback: string): EventGroup[] {
  const byLabel = new Map<string, number[]>();
  for (const e of events) {
    const list = byLabel.get(e.label);
    if (list) list.push(e.request);
    else byLabel.set(e.label, [e.request]);
  }
  if (byLabel.size > MAX_LABELS) {
    return [{ label: fallback, colour: EVENT_COLOURS[0]!, count: events.length, requests: events.map((e) => e.request) }];
  }
  return [...byLabel].map(([label, requests], g) => ({ label, colour: EVENT_COLOURS[g]!, count: requests.length, requests }));
}

/** The height the marks' strip takes above a panel's plot. */
export function rugHeight(groups: readonly EventGroup[]): number {
  return groups.length === 0 ? 0 : groups.length * RUG_ROW + 4;
}

/**
 * Each group's events as short marks in its row of the strip at the top of `panel`, one mark per
 * half pixel however many events fall there; when few columns are marked, also as faint lines
 * across the plot below the strip.
 */
export function eventMarks(groups: readonly EventGroup[], requests: number, panel: Panel): string[] {
  if (groups.length === 0) return [];
  const columns = groups.map((g) => markColumns(g, requests));
  const full = columns.reduce((n, xs) => n + xs.length, 0) <= MAX_FULL_MARKS;
  const plotTop = panel.top + rugHeight(groups);
  const out = [`<rect x="${PLOT_LEFT}" y="${panel.top}" width="${PLOT_RIGHT - PLOT_LEFT}" height="${plotTop - panel.top - 2}" fill="#f4f4f4" stroke="none"/>`];
  groups.forEach((g, i) => {
    const y = panel.top + 1 + i * RUG_ROW;
    const rug = columns[i]!.map((x) => `M${x} ${y}v${RUG_ROW - 2}`).join("");
    out.push(`<path d="${rug}" stroke="${g.colour}" stroke-width="1" fill="none"/>`);
    if (full) {
      const lines = columns[i]!.map((x) => `M${x} ${plotTop}V${panel.bottom}`).join("");
      out.push(`<path d="${lines}" stroke="${g.colour}" stroke-width="1" stroke-opacity="0.35" fill="none"/>`);
    }
  });
  return out;
}

function markColumns(group: EventGroup, requests: number): string[] {
  const xs = new Set<number>();
  for (const r of group.requests) xs.add(Math.round(requestX(r, requests) * 2) / 2);
  return [...xs].sort((a, b) => a - b).map(coord);
}
