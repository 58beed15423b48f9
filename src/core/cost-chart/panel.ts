import { digitGroups } from "../digit-groups.js";
import { decimate } from "./decimate.js";
import { PLOT_COLUMNS, PLOT_LEFT, PLOT_RIGHT, requestX, valueY, type Panel } from "./layout.js";
import { requestTicks, valueTicks } from "./ticks.js";
import { coord, xmlText } from "./xml.js";

export interface PanelSeries {
  values: readonly number[];
  colour: string;
}

export interface PanelAxis {
  format: (v: number) => string;
  /** The smallest step between two y labels that still prints distinct labels. */
  minStep: number;
}

/** A panel's frame, grid, tick labels, heading and one decimated line per series. */
export function drawPanel(panel: Panel, series: readonly PanelSeries[], requests: number, axis: PanelAxis): string[] {
  return drawPlot(panel, panel, series, requests, axis);
}

/** As `drawPanel`, with the values drawn in `plot` (a part of `panel`, below a strip of event marks). */
export function drawPlot(panel: Panel, plot: Panel, series: readonly PanelSeries[], requests: number, axis: PanelAxis): string[] {
  const max = series.reduce((m, s) => s.values.reduce((a, v) => Math.max(a, v), m), 0);
  const ticks = valueTicks(max, 5, axis.minStep);
  const top = ticks[ticks.length - 1]!;
  const out = [`<text x="${PLOT_LEFT}" y="${panel.top - 10}" font-size="13" font-weight="bold">${xmlText(panel.heading)}</text>`];
  for (const t of ticks) {
    const y = coord(valueY(t, top, plot));
    out.push(`<line x1="${PLOT_LEFT}" y1="${y}" x2="${PLOT_RIGHT}" y2="${y}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${PLOT_LEFT - 6}" y="${y}" dy="4" font-size="11" text-anchor="end">${xmlText(axis.format(t))}</text>`);
  }
  for (const t of requestTicks(requests, 8)) {
    const x = coord(requestX(t - 1, requests));
    out.push(`<line x1="${x}" y1="${panel.bottom}" x2="${x}" y2="${panel.bottom + 4}" stroke="#444"/>`);
    out.push(`<text x="${x}" y="${panel.bottom + 16}" font-size="11" text-anchor="middle">${xmlText(digitGroups(t))}</text>`);
  }
  out.push(`<path d="M${PLOT_LEFT} ${panel.top}V${panel.bottom}H${PLOT_RIGHT}" fill="none" stroke="#444"/>`);
  for (const s of series) out.push(seriesLine(s, requests, top, plot));
  return out;
}

function seriesLine(s: PanelSeries, requests: number, top: number, panel: Panel): string {
  if (requests === 0) return "";
  if (requests === 1) {
    return `<circle cx="${coord(requestX(0, 1))}" cy="${coord(valueY(s.values[0]!, top, panel))}" r="3" fill="${s.colour}"/>`;
  }
  const points = decimate(s.values, PLOT_COLUMNS).map((i) => `${coord(requestX(i, requests))},${coord(valueY(s.values[i]!, top, panel))}`);
  return `<polyline points="${points.join(" ")}" fill="none" stroke="${s.colour}" stroke-width="1.5" stroke-linejoin="round"/>`;
}
