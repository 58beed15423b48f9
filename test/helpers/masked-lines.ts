/**
 * Appended session lines with what legitimately differs between two runs masked out: ids,
 * parents and times (random or the clock's), `compressedAt`, and the folder of each spill path
 * (absolute, so it names each run's own folder).
 */

import path from "node:path";

export function maskedLine(line: string): string {
  const entry = JSON.parse(line);
  entry.id = "<id>";
  entry.parentId = "<parent>";
  entry.timestamp = "<ts>";
  if (entry.data?.compressedAt) entry.data.compressedAt = 0;
  for (const record of entry.data?.toolCalls ?? []) if (record.spillPath) record.spillPath = path.basename(record.spillPath);
  return JSON.stringify(entry);
}
