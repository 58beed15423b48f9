/**
 * Where the test fixtures live: inside the repository, so a fresh clone tests with nothing
 * beside it (fixtures/real-pi-sessions/README.md says where they come from).
 */

import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The four real pi sessions (never write to them: copy first). */
export const REAL_SESSIONS_DIR = path.join(REPO_ROOT, "fixtures", "real-pi-sessions");
