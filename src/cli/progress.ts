/**
 * Progress of a compact run on stderr: a cli-progress bar on a TTY (chains done / total for the
 * current session, MB of session files processed over the whole run, ETA), a few plain lines
 * when stderr is a file or pipe, nothing at all for `--json` without a TTY (scripts parse
 * stdout and may log stderr).
 */

import { createRequire } from "node:module";
import type cliProgressModule from "cli-progress";
import type { ChainProgress } from "../main/compress-eligible.js";
import type { CliIo } from "./output.js";
import { writeErr } from "./output.js";

export interface SessionStart {
  file: string;
  /** 1-based position in the run. */
  index: number;
  count: number;
  bytes: number;
}

export interface ProgressSink {
  sessionStart(session: SessionStart): void;
  chainDone(progress: ChainProgress): void;
  sessionEnd(): void;
  /** Ends the display (the bar is cleared, so the summary stands alone). */
  stop(): void;
}

export function createProgress(io: CliIo, options: { json: boolean; totalBytes: number }): ProgressSink {
  if (io.stderr.isTTY === true) return new BarProgress(io, options.totalBytes);
  if (!options.json) return new PlainProgress(io);
  return { sessionStart() {}, chainDone() {}, sessionEnd() {}, stop() {} };
}

/**
 * cli-progress is loaded only for a bar (stderr is a terminal): a script's run, `--json` or piped,
 * never draws one and never loads it.
 */
function loadCliProgress(): typeof cliProgressModule {
  return createRequire(import.meta.url)("cli-progress") as typeof cliProgressModule;
}

const MB = 1024 * 1024;

function mb(bytes: number): string {
  return (bytes / MB).toFixed(1);
}

/** Bytes of the run processed: finished sessions plus the done fraction of the current one. */
class ByteCounter {
  private doneBytes = 0;
  private current = 0;
  private fraction = 0;

  start(bytes: number): void {
    this.current = bytes;
    this.fraction = 0;
  }
  advance(progress: ChainProgress): void {
    this.fraction = progress.total > 0 ? progress.done / progress.total : 1;
  }
  end(): void {
    this.doneBytes += this.current;
    this.current = 0;
    this.fraction = 0;
  }
  get processed(): number {
    return this.doneBytes + this.current * this.fraction;
  }
}

class BarProgress implements ProgressSink {
  private readonly bar: cliProgressModule.SingleBar;
  private readonly bytes = new ByteCounter();
  private session: SessionStart | undefined;
  private running = false;

  constructor(
    io: CliIo,
    private readonly totalBytes: number,
  ) {
    const cliProgress = loadCliProgress();
    this.bar = new cliProgress.SingleBar(
      {
        stream: io.stderr,
        format: "{name} {bar} {value}/{total} chains | {mb}/{totalMb} MB | ETA {eta_formatted}",
        barsize: 24,
        hideCursor: true,
        clearOnComplete: true,
        etaBuffer: 50,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  sessionStart(session: SessionStart): void {
    this.session = session;
    this.bytes.start(session.bytes);
  }

  /** The chain total is only known at the first event, so the bar starts then. */
  chainDone(progress: ChainProgress): void {
    this.bytes.advance(progress);
    const payload = { name: this.label(), mb: mb(this.bytes.processed), totalMb: mb(this.totalBytes) };
    if (!this.running) {
      this.bar.start(progress.total, progress.done, payload);
      this.running = true;
    } else {
      this.bar.setTotal(progress.total);
      this.bar.update(progress.done, payload);
    }
  }

  sessionEnd(): void {
    this.bytes.end();
    this.stop();
  }

  stop(): void {
    if (!this.running) return;
    this.bar.stop();
    this.running = false;
  }

  private label(): string {
    const s = this.session;
    if (!s) return "";
    const name = s.file.length > 40 ? `…${s.file.slice(-39)}` : s.file;
    return s.count > 1 ? `[${s.index}/${s.count}] ${name}` : name;
  }
}

/** At most one line every PLAIN_INTERVAL_MS per session, plus the last one. */
const PLAIN_INTERVAL_MS = 2_000;

class PlainProgress implements ProgressSink {
  private lastLine = 0;

  constructor(private readonly io: CliIo) {}

  sessionStart(session: SessionStart): void {
    this.lastLine = Date.now();
    const position = session.count > 1 ? ` [${session.index}/${session.count}]` : "";
    writeErr(this.io, `chainpress: compacting ${session.file}${position} (${mb(session.bytes)} MB)`);
  }

  chainDone(progress: ChainProgress): void {
    const now = Date.now();
    if (progress.done < progress.total && now - this.lastLine < PLAIN_INTERVAL_MS) return;
    this.lastLine = now;
    const archived = (progress.archivedChars / 1e6).toFixed(1);
    writeErr(this.io, `chainpress:   ${progress.done}/${progress.total} chains, ${archived} M chars of output archived`);
  }

  sessionEnd(): void {}
  stop(): void {}
}
