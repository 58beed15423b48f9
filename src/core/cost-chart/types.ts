/** One replayed policy's series: one value per request, in request order. */
export interface ChartRun {
  label: string;
  promptTokens: readonly number[];
  cumulativeUsd: readonly number[];
}

/** What the cost chart draws: the runs share one request axis; events mark requests by index. */
export interface CostChartInput {
  title: string;
  runs: readonly ChartRun[];
  events: ReadonlyArray<{ request: number; label: string }>;
  cacheTtlLabel: string;
}

/** Input the chart refuses, naming the field and index at fault. */
export class CostChartInputError extends Error {
  constructor(readonly field: string, message: string) {
    super(`cost chart: ${field}: ${message}`);
    this.name = "CostChartInputError";
  }
}
