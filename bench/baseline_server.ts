/**
 * The baseline of bench/runs.ts: a bare `Deno.serve` that answers `POST /v1/runs` with the same
 * SSE frames agentd sends for an echo run of the request's words, with no validation, no
 * persistence and no pub/sub. Prints `{"url": ...}` once listening.
 *
 * Usage: deno run -A bench/baseline_server.ts
 */

const encoder = new TextEncoder();

function frame(kind: string, payload: Record<string, unknown>): Uint8Array {
  const data = JSON.stringify({ kind, timestamp: Date.now() / 1000, ...payload });
  return encoder.encode(`event: ${kind}\ndata: ${data}\n\n`);
}

async function handle(req: Request): Promise<Response> {
  if (req.method !== "POST") return new Response("not found", { status: 404 });
  const body = await req.json();
  const value: string = body.messages?.[0]?.content?.[0]?.value ?? "";
  const delayMs: number = body.model?.override?.inference_params?.provider_params?.delay_ms ?? 0;
  const words = value.match(/\S+\s*/g) ?? [];
  const session_id = crypto.randomUUID();
  const run_id = crypto.randomUUID();
  const message_id = crypto.randomUUID();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(frame("run_started", { session_id, run_id }));
      controller.enqueue(frame("messages_snapshot", { messages: body.messages }));
      controller.enqueue(frame("step_started", { step: 1, step_name: "model" }));
      controller.enqueue(frame("text_message_start", { message_id, role: "assistant" }));
      for (const delta of words) {
        if (delayMs > 0) await new Promise((r) => (timer = setTimeout(r, delayMs)));
        controller.enqueue(frame("text_message_content", { message_id, delta }));
      }
      controller.enqueue(frame("text_message_end", { message_id }));
      controller.enqueue(frame("step_finished", { step: 1, step_name: "model" }));
      controller.enqueue(
        frame("run_finished", {
          session_id,
          run_id,
          status: "completed",
          interrupt_payload: null,
          result: { text: value, context: null },
        }),
      );
      controller.close();
    },
    cancel() {
      clearTimeout(timer);
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream" } });
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handle);
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.addr.port}` }));
