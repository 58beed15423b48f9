/** `chainpress cost`: replays saved sessions' bills; reads them, writes nothing but `--chart`. */

import { costChartSvg } from "../../core/cost-chart.js";
import { costChartInput } from "../../core/cost/cost-chart-input.js";
import { costTotals } from "../../core/cost/cost-totals.js";
import type { SessionCost } from "../../core/cost/session-cost.js";
import { writeFileAtomic } from "../../io/atomic-write.js";
import { costOfSession, type CostRun } from "../../main/cost-session.js";
import type { LivePolicySettings } from "../../main/cost-policy.js";
import type { RawCostOptions } from "../commands/cost.js";
import { formatCostTotals, formatSessionCost, ttlLabel } from "../cost-format.js";
import { CliError, UsageError, describeError, formatError } from "../errors.js";
import { colorsEnabled, writeErr, writeOut, type CliIo } from "../output.js";
import { expandSessionPaths } from "../session-files.js";
import { resolveSessionPath } from "../session-path.js";
import { loadCliSettings, settingsJson } from "../settings.js";

export async function runCost(io: CliIo, inputs: string[], raw: RawCostOptions): Promise<number> {
  const settings = loadCliSettings(io);
  const followLinks = raw.followLinks === true;
  const files = await expandSessionPaths(inputs, (file, why) => writeErr(io, `chainpress: note: skipped ${file}: ${why}`), followLinks);
  if (files.length === 0) throw new CliError(`${inputs.join(", ")}: no *.jsonl session files found`);
  if (raw.chart !== undefined && files.length !== 1) throw new UsageError(`--chart takes exactly one session (${files.length} given)`);
  const live: LivePolicySettings = {
    rollingWindow: raw.rollingWindow ?? settings.settings.chainCompression.rollingWindow,
    trigger: raw.trigger ?? settings.settings.chainCompression.trigger,
    paybackRequests: raw.paybackRequests ?? settings.settings.chainCompression.paybackRequests,
    cacheTtlSeconds: raw.cacheTtl / 1000,
    protectedTools: raw.protectedTools ?? settings.settings.protectedTools,
    protectedPaths: raw.protectedPaths ?? settings.settings.protectedPaths,
    spillThreshold: raw.spillThreshold ?? settings.settings.spillThreshold,
    openChains: settings.settings.openChains.enabled && raw.openChains !== false,
  };
  const json = raw.json === true;
  const color = colorsEnabled(io.stdout, io.env);
  const progress = progressLine(io, files.length);
  const sessions: SessionCost[] = [];
  const failed: { file: string; error: string }[] = [];
  for (const [i, named] of files.entries()) {
    progress(i, named);
    try {
      const { file } = resolveSessionPath(named, followLinks);
      const run = await costOfSession(file, { cacheTtlMs: raw.cacheTtl }, live, settings.settings);
      progress(-1, "");
      for (const warning of run.warnings) writeErr(io, `chainpress: warning: ${warning}`);
      sessions.push(run.cost);
      if (raw.chart !== undefined) await writeChart(raw.chart, run);
      if (!json) await writeOut(io.stdout, `${formatSessionCost(run.cost, color)}\n\n`);
    } catch (error) {
      progress(-1, "");
      if (error instanceof UsageError) throw error;
      writeErr(io, formatError(error, io.env));
      failed.push({ file: named, error: describeError(error) });
    }
  }
  const totals = costTotals(sessions);
  if (json) await writeOut(io.stdout, `${JSON.stringify({ ok: failed.length === 0, sessions, totals, failed, settings: { cacheTtlMinutes: raw.cacheTtl / 60_000, policy: live, file: settingsJson(settings) } }, null, 2)}\n`);
  else if (files.length > 1) await writeOut(io.stdout, `${formatCostTotals(totals, failed.length, color)}\n`);
  return failed.length === 0 ? 0 : 1;
}

/** One SVG for the session: as run, and chainpress when it was replayed. */
async function writeChart(target: string, run: CostRun): Promise<void> {
  const runs = [{ label: "as run", result: run.asRun }, ...(run.chainpress === null ? [] : [{ label: "chainpress", result: run.chainpress }])];
  const svg = costChartSvg(costChartInput(`chainpress cost: ${run.cost.file}`, runs, ttlLabel(run.cost.cacheTtlMinutes)));
  try {
    await writeFileAtomic(target, [svg], { role: "the --chart file" });
  } catch (error) {
    // The atomic write's own message may name its temporary file; the user named `target`.
    throw new CliError(`${target}: cannot write the chart: ${describeError(error)}`);
  }
}

/**
 * On a TTY, one line on stderr naming the session being replayed (`index` -1 clears it);
 * nothing otherwise, so logs and scripts see only the report.
 */
function progressLine(io: CliIo, count: number): (index: number, file: string) => void {
  if (io.stderr.isTTY !== true) return () => {};
  return (index, file) => {
    const text = index < 0 ? "" : `chainpress: replaying ${count > 1 ? `[${index + 1}/${count}] ` : ""}${file.length > 60 ? `…${file.slice(-59)}` : file}`;
    io.stderr.write(`\r\x1b[2K${text}`);
  };
}
