/** The one capability the orchestrator needs from a session writer: append a durable custom entry. */

import type { DataJson } from "../io/append-session.js";

/**
 * Resolves once the entry is written (durably, unless the caller syncs in groups); rejects and
 * writes nothing on failure. `dataJson`, when given, is `JSON.stringify(data)` (or its UTF-8
 * bytes) already computed off the main thread, by a worker; a writer that serialises must use it:
 * on the file path `data` holds lightened records (core/light-value.ts), not the real ones.
 */
export type AppendEntry = (customType: string, data: unknown, dataJson?: DataJson) => Promise<void>;
