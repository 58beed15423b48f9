import { digitGroups } from "./digit-groups.js";
import { eventMarks, groupEvents, rugHeight } from "./cost-chart/events.js";
import { BILL_PANEL, FONT, HEIGHT, PLOT_LEFT, PLOT_RIGHT, RUN_COLOURS, TOKENS_PANEL, WIDTH } from "./cost-chart/layout.js";
import { drawLegend, eventLegendLabel, type LegendItem } from "./cost-chart/legend.js";
import { drawPanel, drawPlot } from "./cost-chart/panel.js";
import { formatTokens, formatUsd } from "./cost-chart/ticks.js";
import type { CostChartInput } from "./cost-chart/types.js";
import { validateChartInput } from "./cost-chart/validate.js";
import { clip, xmlText } from "./cost-chart/xml.js";

export { CostChartInputError, type ChartRun, type CostChartInput } from "./cost-chart/types.js";

/**
 * A replay's chart as one self-contained SVG document (no scripts, links, images or fonts beyond a
 * generic family): prompt tokens per request above, the cumulative bill below, compression events
 * marked. The same input gives the same bytes; the size is bounded whatever the number of requests.
 * Throws `CostChartInputError` on ragged, negative or non-finite series and out-of-range events.
 */
export function costChartSvg(input: CostChartInput): string {
  const requests = validateChartInput(input);
  const colour = (r: number) => RUN_COLOURS[r % RUN_COLOURS.length]!;
  const groups = groupEvents(input.events, "compression");
  const legend: LegendItem[] = [
    ...input.runs.map((run, r) => ({ label: run.label, colour: colour(r), kind: "line" as const })),
    ...groups.map((g) => ({ label: eventLegendLabel(g), colour: g.colour, kind: "mark" as const })),
  ];
  const subtitle = `${digitGroups(requests)} request${requests === 1 ? "" : "s"} · prompt cache lifetime ${input.cacheTtlLabel}`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="${FONT}" fill="#222">`,
    `<title>${xmlText(input.title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="16" y="26" font-size="17" font-weight="bold">${xmlText(clip(input.title, 90))}</text>`,
    `<text x="16" y="46" font-size="12" fill="#555">${xmlText(clip(subtitle, 140))}</text>`,
    ...drawLegend(legend, 70),
    ...eventMarks(groups, requests, TOKENS_PANEL),
    ...drawPlot(TOKENS_PANEL, { ...TOKENS_PANEL, top: TOKENS_PANEL.top + rugHeight(groups) }, input.runs.map((run, r) => ({ values: run.promptTokens, colour: colour(r) })), requests, { format: formatTokens, minStep: 1 }),
    ...drawPanel(BILL_PANEL, input.runs.map((run, r) => ({ values: run.cumulativeUsd, colour: colour(r) })), requests, { format: formatUsd, minStep: 0.01 }),
    `<text x="${(PLOT_LEFT + PLOT_RIGHT) / 2}" y="${HEIGHT - 16}" font-size="12" text-anchor="middle" fill="#555">request</text>`,
  ];
  if (requests === 0) parts.push(`<text x="${WIDTH / 2}" y="${(TOKENS_PANEL.top + TOKENS_PANEL.bottom) / 2}" font-size="14" text-anchor="middle" fill="#777">no requests</text>`);
  parts.push("</svg>");
  return `${parts.filter((p) => p !== "").join("\n")}\n`;
}
