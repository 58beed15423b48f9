/** `chainpress stats`: chains, coverage, compression and context size before/after. */

import { imageTallyText } from "../../core/billed-size.js";
import { digitGroups } from "../../core/digit-groups.js";
import { describeLiveOwner, liveSessionOwner } from "../../io/live-session-lock.js";
import { bold, colorsEnabled, writeOut, type CliIo } from "../output.js";
import type { FollowLinksFlag, ProtectionFlags } from "../options.js";
import { loadForReading, pruneOptionsOf } from "../read-model.js";
import { loadCliSettings, settingsJson, settingsLine } from "../settings.js";
import { sessionStats, type ChainStats, type SessionStats } from "../session-stats.js";
import { formatSize, percentChange } from "../summary.js";

export async function runStats(io: CliIo, file: string, flags: ProtectionFlags & FollowLinksFlag & { json?: boolean }): Promise<number> {
  const settings = loadCliSettings(io);
  const model = await loadForReading(file, io, flags);
  const stats = sessionStats(model, pruneOptionsOf(flags, settings.settings));
  const json = flags.json === true;
  // Beside the file, or beside the link pi may have opened it by.
  const owner = liveSessionOwner(model.loaded.file) ?? (model.loaded.file === file ? null : liveSessionOwner(file));
  const openInPi = owner === null ? null : { pid: owner.pid, note: describeLiveOwner(owner) };
  const text = json
    ? JSON.stringify({ ...stats, openInPi, settings: settingsJson(settings) }, null, 2)
    : formatStats(stats, colorsEnabled(io.stdout, io.env)) + (openInPi ? `\n${openInPi.note}` : "") + `\n${settingsLine(settings)}`;
  await writeOut(io.stdout, `${text}\n`);
  return 0;
}

function formatStats(s: SessionStats, color: boolean): string {
  const c = s.chains;
  const { before, after } = s.context;
  const change = percentChange(before.chars, after.chars).replace(/^, /, "");
  const saved = change ? ` (${change})` : "";
  return [
    bold(`${s.file}`, color) + `  session ${s.sessionId}, version ${s.fileVersion} on disk`,
    `chains: ${c.total} (${c.closed} closed, ${c.interrupted} interrupted, ${c.open} open); ${c.compressed} compressed`,
    ...(s.list.length > 0 ? [chainHeader(), ...s.list.map(chainRow)] : []),
    `context before: ${formatSize(before.chars, before.tokens)}, ${before.messages} messages${imagesNote(before)}`,
    `context after:  ${formatSize(after.chars, after.tokens)}, ${after.messages} messages${saved}${imagesNote(after)}`,
  ].join("\n");
}

/** "; 3 images as ~2,097 tokens (3 by pixel size)", nothing for a context without images. */
function imagesNote(size: SessionStats["context"]["before"]): string {
  const text = imageTallyText(size.images);
  return text === "" ? "" : `; ${text}`;
}

function chainHeader(): string {
  return `  ${"#".padStart(4)}  ${"start".padEnd(24)}  ${"status".padEnd(11)}  ${"calls".padStart(5)}  ${"chars".padStart(11)}  ${"coverage".padEnd(9)}  compressed`;
}

function chainRow(chain: ChainStats, i: number): string {
  return [
    `  ${String(i + 1).padStart(4)}`,
    (chain.startTime ?? String(chain.startUserTimestamp)).padEnd(24),
    chain.status.padEnd(11),
    String(chain.calls).padStart(5),
    digitGroups(chain.chars).padStart(11),
    chain.coverage.padEnd(9),
    chain.compressed ?? "-",
  ].join("  ");
}
