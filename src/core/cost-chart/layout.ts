/** The chart's geometry, in SVG user units (pixels at 1:1). */
export const WIDTH = 1000;
export const HEIGHT = 600;
export const PLOT_LEFT = 96;
export const PLOT_RIGHT = 976;
export const FONT = "sans-serif";

export interface Panel {
  top: number;
  bottom: number;
  heading: string;
}

export const TOKENS_PANEL: Panel = { top: 104, bottom: 310, heading: "Prompt tokens per request" };
export const BILL_PANEL: Panel = { top: 362, bottom: 548, heading: "Cumulative bill (US dollars)" };

/** Pixel columns a series is decimated to: one per unit of plot width. */
export const PLOT_COLUMNS = PLOT_RIGHT - PLOT_LEFT;

export const RUN_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
export const EVENT_COLOURS = ["#7f7f7f", "#17becf", "#bcbd22", "#e377c2"];

/** The x of request index `i` (0-based) on an axis of `requests` requests. */
export function requestX(i: number, requests: number): number {
  return requests <= 1 ? (PLOT_LEFT + PLOT_RIGHT) / 2 : PLOT_LEFT + (i / (requests - 1)) * (PLOT_RIGHT - PLOT_LEFT);
}

/** The y of `v` in `panel` whose axis runs from 0 to `top`. */
export function valueY(v: number, top: number, panel: Panel): number {
  return panel.bottom - (v / top) * (panel.bottom - panel.top);
}
