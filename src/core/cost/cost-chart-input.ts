/**
 * The `--chart` input from one session's replays: prompt tokens and cumulative bill per request.
 * A request that billed nothing (aborted before any token) keeps the prompt of the request
 * before it, so the line shows the context rather than a drop to zero.
 */

import type { ChartRun, CostChartInput } from "../cost-chart.js";
import type { ReplayResult } from "../replay/replay.js";

export function costChartInput(title: string, runs: ReadonlyArray<{ label: string; result: ReplayResult }>, cacheTtlLabel: string): CostChartInput {
  const chartRuns: ChartRun[] = runs.map(({ label, result }) => {
    let bill = 0;
    let prompt = 0;
    const promptTokens = result.requests.map((r) => (r.billed ? (prompt = r.promptTokens) : prompt));
    return { label, promptTokens, cumulativeUsd: result.requests.map((r) => (bill += r.cost.total)) };
  });
  const compressions = runs.slice(1).flatMap(({ result }) => result.compressions);
  return { title, runs: chartRuns, events: compressions.map((c) => ({ request: c.request, label: "compression" })), cacheTtlLabel };
}
