/** pi's read-only session manager as handlers receive it (pi 0.73.1 does not export its name). */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";

export type SessionView = ExtensionContext["sessionManager"];
