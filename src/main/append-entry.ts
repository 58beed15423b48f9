/** The one capability the orchestrator needs from a session writer: append a durable custom entry. */

/**
 * Resolves once the entry is written (durably, unless the caller syncs in groups); rejects and
 * writes nothing on failure. `dataJson`, when given, is `JSON.stringify(data)` already computed
 * off the main thread (a worker); a writer that serialises may use it instead of redoing it.
 */
export type AppendEntry = (customType: string, data: unknown, dataJson?: string) => Promise<void>;
