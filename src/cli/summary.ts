/** The human-readable summary of a compact run: what happened to each session and what it saved. */

import { tokensOf } from "../main/compact-report.js";
import type { CompactReport } from "../main/compact-report.js";
import type { SessionOutcome } from "./compact-one.js";
import { imageTallyText } from "../core/billed-size.js";
import { digitGroups } from "../core/digit-groups.js";
import { bold } from "./output.js";

const count = digitGroups;

function plural(n: number, word: string, many = `${word}s`): string {
  return `${count(n)} ${n === 1 ? word : many}`;
}

export function formatSize(chars: number, tokens: number): string {
  return `${count(chars)} chars (~${count(tokens)} tokens)`;
}

/** The context change as a user reads it: a growth is "larger", never a negative "smaller". */
export function percentChange(before: number, after: number): string {
  if (before <= 0 || before === after) return before > 0 ? ", unchanged" : "";
  const percent = (Math.abs(before - after) / before) * 100;
  return `, ${percent.toFixed(1)}% ${after < before ? "smaller" : "larger"}`;
}

export function formatOutcome(outcome: SessionOutcome, color: boolean): string {
  const title = outcome.target === outcome.file ? outcome.file : `${outcome.file} → ${outcome.target}`;
  if (outcome.skipped) return `${bold(title, color)}\n  skipped: ${outcome.skipped}`;
  if (!outcome.report) return `${bold(title, color)}\n  FAILED: ${outcome.error ?? "unknown error"}`;
  const lines = [bold(`${title}${headerNotes(outcome)}`, color), ...reportLines(outcome.report, outcome.sessionBytesAdded)];
  if (outcome.backup) lines.push(`  backup: ${outcome.backup}`);
  if (outcome.droppedLines?.length) lines.push(`  dropped malformed line(s): ${outcome.droppedLines.join(", ")}`);
  if (outcome.swept?.length) lines.push(`  removed ${outcome.swept.length} leftover temporary file(s) of a killed run`);
  if (outcome.error) lines.push(`  FAILED: ${outcome.error}`);
  for (const warning of outcome.report.warnings) lines.push(`  warning: ${warning}`);
  return lines.join("\n");
}

function headerNotes(outcome: SessionOutcome): string {
  const notes: string[] = [];
  if (outcome.report?.dryRun) notes.push("dry run: nothing written");
  if (outcome.report?.migrated) notes.push("migrated to session version 3");
  if (outcome.openInPi) notes.push(outcome.openInPi);
  return notes.length > 0 ? ` (${notes.join("; ")})` : "";
}

/** A dry run wrote nothing, so its lines say what a real run would do. */
function reportLines(r: CompactReport, sessionBytesAdded: number | undefined): string[] {
  const reasons = Object.entries(r.skipped.byReason).map(([reason, n]) => `${reason} ${count(n)}`);
  const ctx = r.context;
  const would = (verb: string, past: string): string => (r.dryRun ? `would ${verb}` : past);
  const lines = [
    `  chains: ${count(r.chains.detected)} detected (${count(r.chains.closed)} closed, ${count(r.chains.interrupted)} interrupted)`,
    `  ${would("compress", "compressed")}: ${plural(r.compressed.length, "chain")}${r.compressed.length > 0 ? ` (${r.deterministic} deterministic)` : ""}`,
    `  skipped: ${count(r.skipped.total)}${reasons.length > 0 ? ` (${reasons.join(", ")})` : ""}`,
  ];
  const hidden = hiddenLine(r);
  if (hidden) lines.push(hidden);
  const grown = sessionBytesAdded === undefined ? "" : `, ${sessionBytesAdded >= 0 ? "+" : "−"}${count(Math.abs(sessionBytesAdded))} bytes on disk`;
  lines.push(
    `  ${would("archive", "archived")}: ${plural(r.recordsArchived, "record")}, ${count(r.archivedChars)} chars; ${plural(r.spilledFiles, "spill file")} (${count(r.spilledBytes)} bytes ${r.dryRun ? "to write" : "written"})`,
    `  ${would("append", "appended")}: ${plural(r.appendedEntries, "entry", "entries")} to the session file${grown}`,
    `  context: ${formatSize(ctx.beforeChars, ctx.beforeTokens)} → ${formatSize(ctx.afterChars, ctx.afterTokens)}${percentChange(ctx.beforeChars, ctx.afterChars)}${imagesNote(r)}`,
    `  wall time: ${(r.wallMs / 1000).toFixed(2)} s`,
  );
  return lines;
}

/** "; images: 3 images as ~2,097 tokens (3 by pixel size) → none", nothing when the context held none. */
function imagesNote(r: CompactReport): string {
  const { beforeImages: before, afterImages: after } = r.context;
  if (before.count === 0 && after.count === 0) return "";
  return `; images: ${imageTallyText(before) || "none"} → ${imageTallyText(after) || "none"}`;
}

/** Chains behind pi's latest compaction: left alone (they save no context), or taken with --include-compacted. */
function hiddenLine(r: CompactReport): string | undefined {
  const { hidden, cut, included } = r.hiddenByCompaction;
  if (hidden.length === 0 && cut.length === 0) return undefined;
  const whole = included ? `${plural(hidden.length, "chain")} included (--include-compacted)` : `${plural(hidden.length, "chain")} left alone`;
  const partly = cut.length > 0 ? `; ${plural(cut.length, "chain")} cut by it, left alone` : "";
  const hint = !included && hidden.length > 0 ? " (--include-compacted compresses them anyway)" : "";
  return `  hidden by compaction: ${whole}${partly}${hint}`;
}

export interface RunTotals {
  sessions: number;
  failed: number;
  chainsCompressed: number;
  chainsSkipped: number;
  recordsArchived: number;
  spilledFiles: number;
  appendedEntries: number;
  beforeChars: number;
  afterChars: number;
  beforeTokens: number;
  afterTokens: number;
  wallMs: number;
}

export function runTotals(outcomes: readonly SessionOutcome[], wallMs: number): RunTotals {
  const totals: RunTotals = { sessions: outcomes.length, failed: 0, chainsCompressed: 0, chainsSkipped: 0, recordsArchived: 0, spilledFiles: 0, appendedEntries: 0, beforeChars: 0, afterChars: 0, beforeTokens: 0, afterTokens: 0, wallMs };
  for (const outcome of outcomes) {
    if (!outcome.ok) totals.failed++;
    const r = outcome.report;
    if (!r) continue;
    totals.chainsCompressed += r.compressed.length;
    totals.chainsSkipped += r.skipped.total;
    totals.recordsArchived += r.recordsArchived;
    totals.spilledFiles += r.spilledFiles;
    totals.appendedEntries += r.appendedEntries;
    totals.beforeChars += r.context.beforeChars;
    totals.afterChars += r.context.afterChars;
  }
  totals.beforeTokens = tokensOf(totals.beforeChars);
  totals.afterTokens = tokensOf(totals.afterChars);
  return totals;
}

export function formatTotals(t: RunTotals, color: boolean): string {
  const failed = t.failed > 0 ? `, ${count(t.failed)} failed` : "";
  return [
    bold(`total: ${plural(t.sessions, "session")}${failed}`, color),
    `  ${plural(t.chainsCompressed, "chain")} compressed, ${count(t.chainsSkipped)} skipped; ${plural(t.recordsArchived, "record")} archived, ${plural(t.spilledFiles, "spill file")}`,
    `  context: ${formatSize(t.beforeChars, t.beforeTokens)} → ${formatSize(t.afterChars, t.afterTokens)}${percentChange(t.beforeChars, t.afterChars)}`,
    `  wall time: ${(t.wallMs / 1000).toFixed(2)} s`,
  ].join("\n");
}
