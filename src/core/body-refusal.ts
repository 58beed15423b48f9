/**
 * Whether a deterministic body can be built for a chain at all. The body prints each record's
 * time as an ISO string (deterministic-body.ts), and a time outside what a Date can hold makes
 * that throw. Such a time is in the session's own data, so the failure would repeat on every
 * run: planning asks here first and refuses the chain for good instead (a reported skip, not a
 * failure that fails every compact).
 */

import { recordTime, type BodyRecord } from "./deterministic-body.js";
import { isRepresentableTime } from "./entry-shapes.js";
import type { SpanOutput } from "./extract-records.js";

/** Why no body can be built from the indexed records plus the planned outputs; undefined when one can. */
export function bodyRefusal(planned: readonly SpanOutput[], indexed: readonly BodyRecord[]): string | undefined {
  for (const record of indexed) {
    const time = recordTime(record);
    if (!isRepresentableTime(time)) return `archived record ${record.toolCallId} has an impossible time (${String(time)})`;
  }
  // Fresh records take the toolResult's timestamp as their time (extract-records outputFields).
  for (const output of planned) {
    if (!isRepresentableTime(output.result.timestamp)) return `tool result ${output.result.toolCallId} has an impossible timestamp (${String(output.result.timestamp)})`;
  }
  return undefined;
}
