/**
 * The peer harness's bare relay (`../shared/peers/bare/server.ts`: one model call per
 * `POST /v1/runs`, relayed as agentd-shaped SSE frames, nothing stored) rebuilt with the layers
 * agentd cannot drop switched on one at a time, to measure what each costs by itself on the same
 * machine (bench/README.md "What the layers cost"):
 *
 * - `--listener node`: `node:http` + `@hono/node-server` (agentd's listener, src/http/listener.ts,
 *   kept for its header, request and idle timeouts) instead of `Deno.serve`;
 * - `--provider aisdk`: the model stream through `@ai-sdk/openai`'s `doStream` (agentd's provider
 *   path) instead of a hand-written SSE parse;
 * - `--frames event`: one write per frame, as the events arrive, instead of one per upstream read.
 *
 * Usage (the fake model and load generator of the peer harness):
 *   PORT=18000 node ../shared/peers/fake-llm/server.mjs &
 *   deno run -A --no-prompt bench/relay_floor.ts --port 18001 --model http://127.0.0.1:18000/v1 \
 *     --listener node --provider aisdk &
 *   node ../shared/peers/load/load.mjs --target bare --url http://127.0.0.1:18001 \
 *     --concurrency 16 --duration 10 --expect-tokens 20 --cpu server=<pid>
 */
import { parseArgs } from "node:util";
import { createServer } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createOpenAI } from "@ai-sdk/openai";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    port: { type: "string", default: "18001" },
    host: { type: "string", default: "127.0.0.1" },
    model: { type: "string", default: "http://127.0.0.1:18000/v1" },
    listener: { type: "string", default: "deno" },
    provider: { type: "string", default: "raw" },
    frames: { type: "string", default: "read" },
  },
});
const BASE = args.model.replace(/\/$/, "");
const perEvent = args.frames === "event";
const encoder = new TextEncoder();
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

function frame(kind: string, fields: Record<string, unknown>): string {
  const data = JSON.stringify({ kind, timestamp: Date.now() / 1000, ...fields });
  return `event: ${kind}\ndata: ${data}\n\n`;
}

type InMessage = { role?: string; content?: { type?: string; value?: string }[] };

function promptText(messages: InMessage[]): string {
  return messages.map((m) => (m.content ?? []).map((p) => p.value ?? "").join("")).join("\n");
}

/** The model's text deltas, one array per upstream read (the hand-written parse). */
async function* rawDeltas(text: string, signal: AbortSignal): AsyncGenerator<string[]> {
  const upstream = await fetch(`${BASE}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-floor" },
    body: JSON.stringify({
      model: "fake-model",
      stream: true,
      messages: [{ role: "user", content: text }],
    }),
    signal,
  });
  if (!upstream.ok || !upstream.body) throw new Error(`model answered ${upstream.status}`);
  let buf = "";
  for await (const chunk of upstream.body.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    const out: string[] = [];
    let end: number;
    while ((end = buf.indexOf("\n\n")) !== -1) {
      const evt = buf.slice(0, end);
      buf = buf.slice(end + 2);
      if (!evt.startsWith("data: ") || evt === "data: [DONE]") continue;
      const delta = JSON.parse(evt.slice(6)).choices?.[0]?.delta?.content;
      if (typeof delta === "string" && delta.length > 0) out.push(delta);
    }
    if (out.length > 0) yield out;
  }
}

const openai = createOpenAI({ apiKey: "sk-floor", baseURL: BASE });

/** The model's text deltas through the AI SDK's `doStream`, one array per part. */
async function* aisdkDeltas(text: string, signal: AbortSignal): AsyncGenerator<string[]> {
  const { stream } = await openai.chat("fake-model").doStream({
    prompt: [{ role: "user", content: [{ type: "text", text }] }],
    abortSignal: signal,
  });
  for await (const part of stream) {
    if (part.type === "text-delta" && part.delta.length > 0) yield [part.delta];
    if (part.type === "error") throw part.error;
  }
}

const deltas = args.provider === "aisdk" ? aisdkDeltas : rawDeltas;

async function run(req: Request): Promise<Response> {
  const body = await req.json() as { messages?: InMessage[] };
  if (!Array.isArray(body?.messages) || body.messages.length === 0) {
    return Response.json({ code: 400, message: "messages required" }, { status: 400 });
  }
  const session_id = crypto.randomUUID();
  const run_id = crypto.randomUUID();
  const message_id = crypto.randomUUID();
  const abort = new AbortController();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(frame("run_started", { session_id, run_id })));
      let error: string | null = null;
      try {
        for await (const batch of deltas(promptText(body.messages!), abort.signal)) {
          const frames = batch.map((delta) => frame("text_message_content", { message_id, delta }));
          if (perEvent) { for (const f of frames) controller.enqueue(encoder.encode(f)); }
          else controller.enqueue(encoder.encode(frames.join("")));
        }
      } catch (e) {
        if (abort.signal.aborted) return;
        error = e instanceof Error ? e.message : String(e);
      }
      controller.enqueue(encoder.encode(frame("run_finished", {
        session_id,
        run_id,
        status: error === null ? "completed" : "failed",
        interrupt_payload: null,
        result: error === null ? null : { error },
      })));
      controller.close();
    },
    cancel() {
      abort.abort();
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}

function handle(req: Request): Response | Promise<Response> {
  const { pathname } = new URL(req.url);
  if (req.method === "POST" && pathname === "/v1/runs") return run(req);
  if (req.method === "GET" && pathname === "/health") return new Response("ok");
  return Response.json({ code: 404, message: "not found" }, { status: 404 });
}

const port = Number(args.port);
if (args.listener === "node") {
  const listener = getRequestListener(handle, { overrideGlobalObjects: false });
  createServer((req, res) => void listener(req, res)).listen(port, args.host);
} else {
  Deno.serve({ hostname: args.host, port, onListen: () => {} }, handle);
}
