/**
 * Where the shared material lives: `../shared` beside the checkout (CI lays a copy there), so
 * tests never depend on an absolute path of one machine.
 */

import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The four real pi sessions (read-only: copy before writing). */
export const REAL_SESSIONS_DIR = path.resolve(REPO_ROOT, "..", "shared", "fixtures", "real-pi-sessions");
