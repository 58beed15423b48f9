// A scripted OpenAI-compatible model for driving a real pi offline: POST /v1/chat/completions,
// streamed as SSE, on 127.0.0.1 only. Every request is kept (and optionally appended to a JSONL
// file): the request log is the test oracle, it holds exactly what pi sent to the model.
//
// The script is a function `(request, log) => step`, called once per request, where a step is
// `{ text?, thinking?, toolCalls?: [{ name, arguments, id? }] }`, or `{ error: { status, body } }`:
// that request is answered with HTTP `status` and `body` (an object is sent as JSON), as a
// provider refuses a request (e.g. 400 with OpenAI's context_length_exceeded body, which pi
// classifies as a context overflow). Requests without `tools` are pi's own summarisation calls
// (compaction, branch summary) and always get `summaryText`.
//
// Runs in the test's own process (the test spawns pi asynchronously, so this server keeps
// answering). Same approach as shared/reference/pi-harness/mock-llm.mjs, written afresh.
import fs from "node:fs";
import http from "node:http";

/** Text of an OpenAI message's content (string or parts). */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => part?.text ?? "").join("");
  return "";
}

/** pi's openai-completions provider sends a tool result's images as a user message that starts so. */
export const ATTACHED_IMAGES_TEXT = "Attached image(s) from tool result:";

/** Index of the last user message (not a compressed chain, not a tool result's attached images), its text, and the assistant turns after it. */
export function lastUserTurn(messages) {
  let index = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const text = contentText(messages[i].content).trimStart();
    if (messages[i].role === "user" && !text.startsWith("<compressed-chain") && !text.startsWith(ATTACHED_IMAGES_TEXT)) {
      index = i;
      break;
    }
  }
  const text = index >= 0 ? contentText(messages[index].content) : "";
  const step = messages.slice(index + 1).filter((m) => m.role === "assistant").length;
  return { index, text, step };
}

function sseChunks(id, model, step) {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const out = [chunk({ role: "assistant", content: "" })];
  if (step.thinking) out.push(chunk({ reasoning_content: step.thinking }));
  if (step.text) out.push(chunk({ content: step.text }));
  (step.toolCalls ?? []).forEach((call, i) => {
    const args = JSON.stringify(call.arguments ?? {});
    out.push(chunk({ tool_calls: [{ index: i, id: call.id ?? `${id}_${i}`, type: "function", function: { name: call.name, arguments: args } }] }));
  });
  out.push(chunk({}, step.toolCalls?.length ? "tool_calls" : "stop"));
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  out.push(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`);
  out.push("data: [DONE]\n\n");
  return out;
}

/**
 * Start the mock (`delayMs`: wait before each answer). Returns `{ port, baseUrl, requests, close() }`; `requests` grows with every call:
 * `{ n, request, step, error? }`. A script that throws answers with a text step naming the error
 * (so pi finishes the turn) and records `error` for the test to report.
 */
export async function startMockLlm({ script, logFile, summaryText = "## Goal\nMock summary.", delayMs = 0 }) {
  const requests = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (!(req.method === "POST" && req.url.endsWith("/chat/completions"))) {
        res.writeHead(404).end("not found");
        return;
      }
      const request = JSON.parse(body || "{}");
      const entry = { n: ++n, request, step: undefined };
      try {
        entry.step = request.tools?.length ? script(request, requests) : { text: summaryText };
      } catch (error) {
        entry.error = String(error?.stack ?? error);
        entry.step = { text: `mock script error: ${error?.message ?? error}` };
      }
      requests.push(entry);
      if (logFile) fs.appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
      const answer = () => {
        if (entry.step.error) {
          const { status, body } = entry.step.error;
          const text = typeof body === "string" ? body : JSON.stringify(body);
          res.writeHead(status, { "content-type": typeof body === "string" ? "text/plain" : "application/json" }).end(text);
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const line of sseChunks(`chatcmpl-mock-${entry.n}`, request.model ?? "mock-model", entry.step)) res.write(line);
        res.end();
      };
      // A real model takes seconds to answer; `delayMs` gives pi's event queue that time.
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
