/** An archived record of a spilled bash output, for tests of reading spill files back. */

import type { ToolCallRecord } from "../../src/core/prune-types.js";

export function spillRecord(spillPath: string, fields: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    toolCallId: "call_1",
    toolName: "bash",
    args: {},
    resultText: "",
    isError: false,
    turnIndex: -1,
    timestamp: 1,
    resultTimestamp: 1,
    resultPreview: "head of the output",
    spillPath,
    ...fields,
  };
}
