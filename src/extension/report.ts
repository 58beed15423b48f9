/**
 * Failure isolation: every handler runs through `guard`, so an exception inside chainpress is
 * shown to the user (ctx.ui.notify; a no-op in print mode) and kept for `/pruner status`, and
 * pi carries on with the uncompressed context. Nothing thrown here ever reaches pi.
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { Chainpress } from "./runtime.js";

export type NoticeLevel = "info" | "warning" | "error";

/** Notify without ever throwing: a stale ctx (session replaced) must not turn a notice into a crash. */
export function notify(ctx: ExtensionContext | undefined, message: string, level: NoticeLevel = "info"): void {
  try {
    ctx?.ui.notify(message, level);
  } catch {
    // The UI is gone (shutdown or session replaced); the message has nowhere to go.
  }
}

export function reportFailure(runtime: Chainpress, ctx: ExtensionContext | undefined, label: string, error: unknown): void {
  const message = `pruner: ${label} failed: ${error instanceof Error ? error.message : String(error)}`;
  runtime.holder.recordError(message);
  notify(ctx, message, "warning");
}

/** Run a handler body; on failure report it and return `fallback` (what pi should do instead). */
export async function guard<T>(runtime: Chainpress, ctx: ExtensionContext | undefined, label: string, fallback: T, body: () => T | Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    reportFailure(runtime, ctx, label, error);
    return fallback;
  }
}
