/**
 * Writing to stdout/stderr from commands. stdout writes wait for drain so a multi-megabyte
 * render never buffers whole in memory; a closed pipe (`chainpress render x | head`) ends the
 * output quietly instead of crashing with EPIPE.
 */

import type { Writable } from "node:stream";

export interface CliIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/** A reader that went away (EPIPE) destroys the stream: that is no error, and writeOut then drops what follows. */
export function watchBrokenPipe(stream: Writable): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}

/** Write and wait until the stream can take more (or the pipe is gone). */
export function writeOut(stream: Writable, chunk: string | Uint8Array): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    if (stream.write(chunk)) resolve();
    else {
      const done = (): void => {
        stream.off("drain", done);
        stream.off("close", done);
        resolve();
      };
      stream.once("drain", done);
      stream.once("close", done);
    }
  });
}

/** One line to stderr (synchronous enough: stderr is unbuffered for files and TTYs). */
export function writeErr(io: CliIo, line: string): void {
  io.stderr.write(`${line}\n`);
}

/** ANSI styling only for a TTY and only when NO_COLOR is unset (https://no-color.org). */
export function colorsEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "");
}

export function bold(text: string, enabled: boolean): string {
  return enabled ? `\u001b[1m${text}\u001b[22m` : text;
}
