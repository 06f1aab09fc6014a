/**
 * The benchmarks' fake OpenAI chat model (`streams_memory.ts`, `model_transport.ts`), served in a
 * process of its own: a role chunk and a `"tok "` chunk at once, then one more every `intervalMs`,
 * `tokens` in all and `[DONE]` (endless without `tokens`). A request's `?tokens=` and `?interval=`
 * override both.
 */
const encoder = new TextEncoder();

/** One `chat.completion.chunk` event carrying `delta`. */
function chunk(delta: Record<string, unknown>): Uint8Array {
  const body = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1,
    model: "fake",
    choices: [{ index: 0, delta, finish_reason: null }],
  };
  return encoder.encode(`data: ${JSON.stringify(body)}\n\n`);
}

/** Serves the fake model on a free loopback port and prints where (`listening on …`). */
export function serveFakeModel(defaults: { intervalMs: number; tokens?: number }): void {
  const role = chunk({ role: "assistant", content: "" });
  const token = chunk({ content: "tok " });
  const done = encoder.encode("data: [DONE]\n\n");
  Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
  }, async (req) => {
    await req.body?.cancel();
    const query = new URL(req.url).searchParams;
    const tokens = Number(query.get("tokens") ?? defaults.tokens ?? Infinity);
    const interval = Number(query.get("interval") ?? defaults.intervalMs);
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(role);
        let sent = 0;
        const next = () => {
          controller.enqueue(token);
          if (++sent < tokens) return;
          clearInterval(timer);
          controller.enqueue(done);
          controller.close();
        };
        next();
        if (sent < tokens) timer = setInterval(next, interval);
      },
      cancel() {
        clearInterval(timer);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
}
