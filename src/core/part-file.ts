/**
 * What `chainpress query --parts DIR` writes for one non-text part (core/archived-parts.ts): the
 * bytes its base64 `data` decodes to (an image file as it was), or, for a part with no base64
 * `data`, its JSON text. Named `<ref>-<n>.<ext>` (archived-parts.ts `partFileName`). Pure.
 */

import { partData } from "./archived-parts.js";
import { jsonText } from "./json-text.js";

export interface PartFile {
  bytes: Uint8Array;
  /** "data": the decoded base64 data; "json": the part's JSON text (it has no base64 data). */
  from: "data" | "json";
}

export function partFileContent(part: unknown): PartFile {
  const data = partData(part);
  const decoded = data === undefined ? undefined : decodedBase64(data);
  if (decoded !== undefined) return { bytes: decoded, from: "data" };
  return { bytes: Buffer.from(jsonText(part) ?? "null", "utf8"), from: "json" };
}

/**
 * The bytes `data` encodes, when it is base64 that encodes them exactly (padding may be left
 * off); undefined otherwise: Node's decoder skips what is not base64, and bytes it made up by
 * skipping are no file of the part's.
 */
function decodedBase64(data: string): Uint8Array | undefined {
  const bytes = Buffer.from(data, "base64");
  const unpadded = (text: string) => text.replace(/=+$/, "");
  return unpadded(bytes.toString("base64")) === unpadded(data) ? bytes : undefined;
}
