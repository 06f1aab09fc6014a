/**
 * A small Upstash-REST-compatible gateway for tests, backed by a real Redis: the requests
 * `@upstash/redis` 1.39 sends, answered the way its HttpClient parses them.
 *
 * - `POST /` with a JSON command array (`["publish","ch","msg"]`) → `{"result": …}`
 * - `POST /pipeline` with an array of command arrays → `[{"result": …} | {"error": …}, …]`
 * - `POST /subscribe/<channel>` (`Accept: text/event-stream`) → an SSE stream of
 *   `data: subscribe,<channel>,1` once Redis confirmed the subscription, then
 *   `data: message,<channel>,<message>` per message.
 *
 * Every request needs `Authorization: Bearer <token>`. With `Upstash-Encoding: base64` (the
 * client's default) string results are base64 encoded, numbers are not, as the client decodes.
 */
import { createClient } from "redis";

/** A running gateway. */
export interface UpstashGateway {
  /** Base URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** The token it accepts. */
  token: string;
  /** Its port (reuse it to restart the gateway "at the same address"). */
  port: number;
  /** Subscription streams currently open. */
  readonly openStreams: number;
  /** Requests served so far, by kind. */
  readonly served: { command: number; pipeline: number; subscribe: number };
  /** Ends every stream, disconnects from Redis and stops listening. */
  close(): Promise<void>;
}

/** Options of `startUpstashGateway`. */
export interface UpstashGatewayOptions {
  /** The Redis behind the gateway. */
  redisUrl: string;
  /** The accepted token; a random one when unset. */
  token?: string;
  /** Port to listen on; a free one when unset. */
  port?: number;
}

type Client = ReturnType<typeof createClient>;

/** Starts a gateway on loopback. */
export async function startUpstashGateway(options: UpstashGatewayOptions): Promise<UpstashGateway> {
  const token = options.token ?? crypto.randomUUID();
  const redis: Client = createClient({
    url: options.redisUrl,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: false },
  });
  redis.on("error", () => {});
  await redis.connect();
  const streams = new Set<() => void>();
  const served = { command: 0, pipeline: 0, subscribe: 0 };

  const handler = async (req: Request): Promise<Response> => {
    if (req.headers.get("authorization") !== `Bearer ${token}`) {
      return Response.json({ error: "Unauthorized" }, { status: 401 });
    }
    if (req.method !== "POST") {
      return Response.json({ error: "method not allowed" }, { status: 405 });
    }
    const path = new URL(req.url).pathname;
    const base64 = req.headers.get("upstash-encoding") === "base64";
    if (path.startsWith("/subscribe/")) {
      served.subscribe++;
      return subscribe(decodeURIComponent(path.slice("/subscribe/".length)));
    }
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return Response.json({ error: "ERR failed to parse the body" }, { status: 400 });
    }
    if (path === "/pipeline") {
      if (!Array.isArray(body) || !body.every(Array.isArray)) {
        return Response.json({ error: "ERR a pipeline is an array of commands" }, { status: 400 });
      }
      served.pipeline++;
      const results = [];
      for (const command of body) results.push(await run(command, base64));
      return Response.json(results);
    }
    if (path === "/" && Array.isArray(body)) {
      served.command++;
      const result = await run(body, base64);
      return Response.json(result, { status: "error" in result ? 400 : 200 });
    }
    return Response.json({ error: `ERR unknown path ${path}` }, { status: 404 });
  };

  const run = async (
    command: unknown[],
    base64: boolean,
  ): Promise<{ result: unknown } | { error: string }> => {
    const name = String(command[0] ?? "").toLowerCase();
    if (["subscribe", "psubscribe", "ssubscribe", "monitor"].includes(name)) {
      return { error: `ERR ${name} is only available as a stream` };
    }
    try {
      const reply = await redis.sendCommand(command.map(String));
      return { result: base64 ? encode(reply) : reply };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  };

  // A client that goes away cancels the response body, which ends its Redis subscription.
  const subscribe = (channel: string): Response => {
    const encoder = new TextEncoder();
    let subscriber: Client | undefined;
    let end = () => {};
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        let ended = false;
        end = () => {
          if (ended) return;
          ended = true;
          streams.delete(end);
          subscriber?.destroy();
          try {
            controller.close();
          } catch {
            // already cancelled by the client
          }
        };
        streams.add(end);
        const frame = (data: string) => {
          if (!ended) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
        };
        try {
          subscriber = redis.duplicate();
          // A lost Redis ends the stream; the client must see the end, as with Upstash.
          subscriber.on("error", () => end());
          await subscriber.connect();
          await subscriber.subscribe(channel, (message) => frame(`message,${channel},${message}`));
          frame(`subscribe,${channel},1`);
        } catch {
          end();
        }
      },
      cancel() {
        end();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      },
    });
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    handler,
  );
  const port = server.addr.port;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    port,
    get openStreams() {
      return streams.size;
    },
    served,
    async close() {
      for (const end of [...streams]) end();
      await server.shutdown();
      redis.destroy();
    },
  };
}

/** Upstash's base64 response encoding: strings encoded ("OK" left as is), numbers and null not. */
function encode(value: unknown): unknown {
  if (typeof value === "string") {
    if (value === "OK") return value;
    const bytes = new TextEncoder().encode(value);
    let binary = "";
    // In slices: spreading a large message into one call would overflow the stack.
    for (let i = 0; i < bytes.length; i += 0x8000) {
      binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return btoa(binary);
  }
  if (Array.isArray(value)) return value.map(encode);
  return value;
}
