import { CostChartInputError, type CostChartInput } from "./types.js";

/** The number of requests every series holds; throws on a ragged, negative or non-finite series. */
export function validateChartInput(input: CostChartInput): number {
  if (input.runs.length === 0) throw new CostChartInputError("runs", "at least one run is needed");
  const requests = input.runs[0]!.promptTokens.length;
  input.runs.forEach((run, r) => {
    checkSeries(`runs[${r}].promptTokens`, run.promptTokens, requests);
    checkSeries(`runs[${r}].cumulativeUsd`, run.cumulativeUsd, requests);
  });
  input.events.forEach((event, e) => {
    if (!Number.isInteger(event.request) || event.request < 0 || event.request >= requests) {
      throw new CostChartInputError(`events[${e}].request`, `${event.request} is not a request index in [0, ${requests})`);
    }
  });
  return requests;
}

function checkSeries(field: string, values: readonly number[], requests: number): void {
  if (values.length !== requests) {
    throw new CostChartInputError(field, `${values.length} values, but runs[0].promptTokens has ${requests}`);
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) throw new CostChartInputError(`${field}[${i}]`, `${v} is not a finite number`);
    if (v < 0) throw new CostChartInputError(`${field}[${i}]`, `${v} is negative`);
  }
}
