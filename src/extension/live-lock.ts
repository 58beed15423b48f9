/**
 * The extension's side of the live-session lock (io/live-session-lock.ts): held for the session
 * pi has open, moved on a session switch, released on shutdown. Taking it can fail (a read-only
 * session folder); that is reported and costs nothing else: the CLI's quiet-file check remains.
 */

import { holdLiveSession, liveLockPathFor } from "../io/live-session-lock.js";
import type { Chainpress } from "./runtime.js";

export async function holdLiveLock(runtime: Chainpress, sessionFile: string | undefined): Promise<void> {
  if (runtime.liveLock && sessionFile !== undefined && runtime.liveLock.lockPath === liveLockPathFor(sessionFile)) return;
  releaseLiveLock(runtime);
  // An in-memory session (--no-session) has no file another process could touch.
  if (sessionFile === undefined) return;
  runtime.liveLock = await holdLiveSession(sessionFile);
}

export function releaseLiveLock(runtime: Chainpress): void {
  const lock = runtime.liveLock;
  runtime.liveLock = undefined;
  lock?.release();
}
