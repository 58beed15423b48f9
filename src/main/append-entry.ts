/** The one capability the orchestrator needs from a session writer: append a durable custom entry. */

/** Resolves once the entry is durably written; rejects (and writes nothing) on failure. */
export type AppendEntry = (customType: string, data: unknown) => Promise<void>;
