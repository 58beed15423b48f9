/** `chainpress render`: what the model would see with the session's current compression. */

import { locateSpillFile } from "../../io/read-spill.js";
import { renderContext } from "../../main/context-size.js";
import { writeOut, type CliIo } from "../output.js";
import type { FollowLinksFlag, ProtectionFlags } from "../options.js";
import { loadForReading, pruneOptionsOf } from "../read-model.js";
import { loadCliSettings } from "../settings.js";
import { transcriptBlock } from "../transcript.js";
import { jsonText } from "../../core/json-text.js";

export async function runRender(io: CliIo, file: string, flags: ProtectionFlags & FollowLinksFlag & { text?: boolean }): Promise<number> {
  const model = await loadForReading(file, io, flags);
  const options = { ...pruneOptionsOf(flags, loadCliSettings(io).settings), spillPathOf: (stored: string) => locateSpillFile(stored, model.blobDir) };
  const messages = renderContext(model, options);
  const text = flags.text === true;
  // Message by message: a rendered session is never one string, however large.
  for (const [i, message] of messages.entries()) {
    const chunk = text ? `${i > 0 ? "\n" : ""}${transcriptBlock(message)}\n` : `${jsonText(message)}\n`;
    await writeOut(io.stdout, chunk);
  }
  return 0;
}
