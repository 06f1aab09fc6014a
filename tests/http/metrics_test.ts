/**
 * `GET /metrics` over real HTTP: the exposition parses (every line in the text format 0.0.4, every
 * metric with HELP and TYPE, histograms cumulative), and the numbers move as runs happen: runs by
 * status, active runs, open streams by kind, model attempts and time to first token, tool calls
 * (a JavaScript fixture tool that succeeds and one that fails), publishes and store calls. And, on
 * a bare app, how the open-streams gauge learns that a stream closed.
 */
import assert from "node:assert/strict";
import {
  eventually,
  pacedModel,
  readEvents,
  readSse,
  startTestServer,
  storeKinds,
  tempDir,
  type TestServer,
} from "../_kit/mod.ts";
import { Hono } from "hono";
import { onSseClose, sseFrame, sseResponse } from "../../src/http/kit/mod.ts";
import { createMetrics, httpMetrics, MetricsRegistry } from "../../src/metrics/mod.ts";

/** One sample line. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition. */
interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  help: Map<string, string>;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL_VALUE = String.raw`"(?:[^"\\\n]|\\[\\"n])*"`;
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*=${LABEL_VALUE}`;
const VALUE = String.raw`-?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|Inf)|\+Inf|NaN`;
const SAMPLE_LINE = new RegExp(
  `^(${NAME})(?:\\{(${LABEL}(?:,${LABEL})*)?,?\\})? (${VALUE})(?: -?\\d+)?$`,
);
const HELP_LINE = new RegExp(`^# HELP (${NAME}) (.*)$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

function unescape(v: string): string {
  return v.replace(/\\(["\\n])/g, (_, c) => (c === "n" ? "\n" : c));
}

function parseValue(text: string): number {
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

/** The metric family a sample belongs to (`x_bucket` of a histogram `x` is `x`). */
function family(name: string, types: Map<string, string>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && types.get(base) === "histogram") return base;
  }
  return name;
}

/** Parses and validates a text exposition; throws on the first line that breaks the format. */
function parseExposition(text: string): Exposition {
  assert.ok(text.endsWith("\n"), "the exposition ends with a newline");
  const out: Exposition = { samples: [], types: new Map(), help: new Map() };
  for (const [i, line] of text.slice(0, -1).split("\n").entries()) {
    const where = `line ${i + 1}: ${JSON.stringify(line)}`;
    if (line.startsWith("# HELP ")) {
      const m = HELP_LINE.exec(line);
      assert.ok(m, `bad HELP, ${where}`);
      assert.ok(!out.help.has(m[1]), `HELP twice, ${where}`);
      out.help.set(m[1], m[2]);
    } else if (line.startsWith("# TYPE ")) {
      const m = TYPE_LINE.exec(line);
      assert.ok(m, `bad TYPE, ${where}`);
      assert.ok(!out.types.has(m[1]), `TYPE twice, ${where}`);
      out.types.set(m[1], m[2]);
    } else {
      assert.ok(!line.startsWith("#") && line !== "", `unexpected line, ${where}`);
      const m = SAMPLE_LINE.exec(line);
      assert.ok(m, `bad sample, ${where}`);
      const labels: Record<string, string> = {};
      for (
        const lm of (m[2] ?? "").matchAll(
          new RegExp(`([a-zA-Z_][a-zA-Z0-9_]*)=(${LABEL_VALUE})`, "g"),
        )
      ) {
        labels[lm[1]] = unescape(lm[2].slice(1, -1));
      }
      const fam = family(m[1], out.types);
      assert.ok(out.types.has(fam), `sample before its TYPE, ${where}`);
      assert.ok(out.help.has(fam), `sample without HELP, ${where}`);
      out.samples.push({ name: m[1], labels, value: parseValue(m[3]) });
    }
  }
  for (const name of out.types.keys()) assert.ok(out.help.has(name), `${name} has no HELP`);
  checkHistograms(out);
  return out;
}

/** Buckets are cumulative, end with `+Inf`, and `+Inf` equals `_count`. */
function checkHistograms(e: Exposition): void {
  for (const [name, type] of e.types) {
    if (type !== "histogram") continue;
    const series = new Map<string, Sample[]>();
    for (const s of e.samples.filter((s) => s.name === `${name}_bucket`)) {
      const { le: _, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      let last = 0;
      for (const b of buckets) {
        assert.ok(b.value >= last, `${name}${key}: buckets are cumulative`);
        last = b.value;
      }
      assert.equal(buckets.at(-1)!.labels.le, "+Inf", `${name}${key}: ends with +Inf`);
      const count = e.samples.find((s) =>
        s.name === `${name}_count` && JSON.stringify(s.labels) === key
      );
      assert.equal(count?.value, last, `${name}${key}: +Inf bucket equals _count`);
    }
  }
}

/** Sum of the samples of `name` whose labels include `labels`. */
function total(e: Exposition, name: string, labels: Record<string, string> = {}): number {
  return e.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function scrape(t: TestServer): Promise<Exposition> {
  const res = await t.fetch("/metrics");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(await res.text());
}

function userText(text: string) {
  return { messages: [{ role: "user", content: [{ type: "text", value: text }] }] };
}

async function attachedRun(t: TestServer, text: string) {
  const res = await t.fetch("/v1/runs", { method: "POST", json: userText(text) });
  assert.equal(res.status, 200);
  const events = await readEvents(res);
  const last = events.at(-1)!;
  assert.equal(last.kind, "run_finished", JSON.stringify(events));
  return last;
}

const TOOL_SOURCE = `
export function add(args) {
  return { sum: Number(args.a) + Number(args.b) };
}
export function broken() {
  throw new Error("this tool always fails");
}
`;

Deno.test("the registry renders the text format (escapes, histograms, instances apart)", () => {
  const a = new MetricsRegistry();
  const c = a.counter({ name: "t_total", help: 'a "help"\nline \\ ok', labelNames: ["k"] });
  c.inc({ k: 'quote " slash \\ newline \n' }, 2);
  const h = a.histogram({ name: "t_seconds", help: "h", buckets: [0.1, 1] });
  h.observe(undefined, 0.05);
  h.observe(undefined, 5);
  const g = a.gauge({ name: "t_open", help: "g" });
  g.collectWith(() => g.set(undefined, 7));
  const text = a.render();
  const e = parseExposition(text);
  assert.equal(e.help.get("t_total"), String.raw`a "help"\nline \\ ok`);
  assert.deepEqual(e.samples[0], {
    name: "t_total",
    labels: { k: 'quote " slash \\ newline \n' },
    value: 2,
  });
  assert.equal(total(e, "t_seconds_bucket", { le: "0.1" }), 1);
  assert.equal(total(e, "t_seconds_bucket", { le: "+Inf" }), 2);
  assert.equal(total(e, "t_seconds_sum"), 5.05);
  assert.equal(total(e, "t_open"), 7);
  assert.throws(() => a.counter({ name: "t_total", help: "again" }), /exists/);
  assert.throws(() => c.inc({ k: "x" }, -1), /cannot decrease/);
  assert.throws(() => a.counter({ name: "bad-name", help: "x" }), /bad metric name/);
  // A second registry shares nothing with the first.
  const b = new MetricsRegistry();
  b.counter({ name: "t_total", help: "fresh", labelNames: ["k"] });
  assert.equal(parseExposition(b.render()).samples.length, 0);
});

for (const kind of storeKinds) {
  Deno.test(`/metrics moves as runs happen (${kind})`, async (tt) => {
    await using dir = await tempDir("agentd_metrics_");
    await dir.write({ "tools.js": TOOL_SOURCE });
    const module = dir.join("tools.js");
    const parameters = { type: "object", properties: {} };
    await using t = await startTestServer({
      store: kind,
      manifest: {
        tool: {
          add: { kind: "javascript", module, function: "add", parameters },
          broken: { kind: "javascript", module, function: "broken", parameters },
        },
        http_server: { protocol: { ag_ui: {} } },
        // A dropped attached stream cancels its run at once.
        runtime: { attached: { reattach_grace: 0 } },
      },
    });
    let before!: Exposition;

    await tt.step("a fresh server exports every metric, at zero", async () => {
      before = await scrape(t);
      for (
        const name of [
          "agentd_runs_total",
          "agentd_runs_started_total",
          "agentd_runs_active",
          "agentd_streams_open",
          "agentd_model_time_to_first_token_seconds",
          "agentd_model_attempts_total",
          "agentd_tool_calls_total",
          "agentd_tool_duration_seconds",
          "agentd_pubsub_publish_seconds",
          "agentd_store_query_seconds",
          "agentd_http_requests_total",
        ]
      ) {
        assert.ok(before.types.has(name), `${name} is exported`);
      }
      assert.equal(before.types.get("agentd_runs_total"), "counter");
      assert.equal(before.types.get("agentd_runs_active"), "gauge");
      assert.equal(before.types.get("agentd_store_query_seconds"), "histogram");
      assert.equal(total(before, "agentd_runs_total", { status: "completed" }), 0);
      assert.equal(total(before, "agentd_runs_active"), 0);
      for (const k of ["attached", "reattach", "ag_ui", "a2a"]) {
        assert.equal(total(before, "agentd_streams_open", { kind: k }), 0);
      }
    });

    await tt.step("runs, a tool that works and a tool that fails", async () => {
      await attachedRun(t, "hello there");
      const added = await attachedRun(t, '/call add {"a": 2, "b": 3}');
      assert.equal(added.status, "completed");
      const broken = await attachedRun(t, "/call broken {}");
      assert.equal(broken.status, "completed", "a tool error goes back to the model");

      await eventually(async () => {
        const after = await scrape(t);
        const delta = (name: string, labels: Record<string, string> = {}) =>
          total(after, name, labels) - total(before, name, labels);
        assert.equal(delta("agentd_runs_total", { status: "completed" }), 3);
        assert.equal(delta("agentd_runs_started_total"), 3);
        assert.equal(total(after, "agentd_runs_active"), 0);
        assert.equal(total(after, "agentd_streams_open", { kind: "attached" }), 0);
        // Five model steps: one for the plain run, two (call, answer) for each tool run.
        const ttft = { provider: "echo" };
        assert.equal(delta("agentd_model_time_to_first_token_seconds_count", ttft), 5);
        assert.equal(delta("agentd_model_attempts_total", { ...ttft, outcome: "ok" }), 5);
        assert.equal(total(after, "agentd_tool_calls_total", { tool: "add", outcome: "ok" }), 1);
        assert.equal(
          total(after, "agentd_tool_calls_total", { tool: "broken", outcome: "error" }),
          1,
        );
        assert.equal(total(after, "agentd_tool_duration_seconds_count", { tool: "add" }), 1);
        assert.ok(total(after, "agentd_tool_duration_seconds_sum", { tool: "add" }) > 0);
        // The events of one turn of the event loop go out as one message: at least one a run.
        assert.ok(delta("agentd_pubsub_publish_seconds_count", { transport: "memory" }) >= 3);
        for (const method of ["createRun", "commitStep", "finishRun"]) {
          assert.ok(
            total(after, "agentd_store_query_seconds_count", { method }) > 0,
            `store method ${method} is timed`,
          );
        }
        assert.equal(
          delta("agentd_http_requests_total", {
            method: "POST",
            route: "/v1/runs",
            status: "200",
          }),
          3,
        );
        return true;
      });
    });

    await tt.step("open streams by kind, and runs by other statuses", async () => {
      const slow = {
        ...userText("one two three four five six seven eight nine ten"),
        model: pacedModel(200),
      };
      const res = await t.fetch("/v1/runs", { method: "POST", json: slow });
      const frames = readSse(res);
      await frames.next();
      const runId = res.headers.get("x-run-id")!;
      const reattach = await t.fetch(`/v1/runs/${runId}/events`);
      assert.equal(reattach.status, 200);
      const reframes = readSse(reattach);
      const agUi = await t.fetch("/ag-ui/run", {
        method: "POST",
        json: {
          threadId: "metrics-thread",
          runId: "metrics-agui",
          messages: [{ id: "m1", role: "user", content: "slow one two three four five" }],
          tools: [],
          context: [],
          state: {},
          forwardedProps: { model: slow.model },
        },
      });
      assert.equal(agUi.status, 200);
      const agFrames = readSse(agUi);
      await agFrames.next();

      const during = await scrape(t);
      assert.equal(total(during, "agentd_streams_open", { kind: "attached" }), 1);
      assert.equal(total(during, "agentd_streams_open", { kind: "reattach" }), 1);
      assert.equal(total(during, "agentd_streams_open", { kind: "ag_ui" }), 1);
      assert.equal(total(during, "agentd_runs_active"), 2);

      // Dropping the attached stream cancels its run; the AG-UI one is cancelled by id.
      await frames.cancel();
      await reframes.all(); // until the cancelled run's final event
      await t.fetch("/v1/runs/metrics-agui/cancel", { method: "PUT" });
      await agFrames.all();

      await eventually(async () => {
        const after = await scrape(t);
        for (const k of ["attached", "reattach", "ag_ui"]) {
          assert.equal(total(after, "agentd_streams_open", { kind: k }), 0, k);
        }
        assert.equal(total(after, "agentd_runs_active"), 0);
        assert.equal(total(after, "agentd_runs_total", { status: "cancelled" }), 2);
        return true;
      });
    });

    await tt.step("each server has its own registry", async () => {
      await using other = await startTestServer({ store: "sqlite" });
      const e = await scrape(other);
      assert.equal(total(e, "agentd_runs_started_total"), 0);
      assert.equal(total(e, "agentd_tool_calls_total"), 0);
    });
  });
}

Deno.test("/metrics: the open-streams gauge follows a kit SSE body as is, any other stream wrapped", async () => {
  const metrics = createMetrics();
  const app = new Hono();
  app.use("*", httpMetrics(metrics, [], onSseClose));
  let kitBody: ReadableStream | null = null;
  // Each stream sends one frame, then waits until it is released.
  const releases: (() => void)[] = [];
  app.get("/kit", () => {
    const release = Promise.withResolvers<void>();
    releases.push(release.resolve);
    const res = sseResponse(
      (async function* () {
        yield sseFrame({ n: 1 });
        await release.promise;
        yield sseFrame({ n: 2 });
      })(),
      { keepaliveMs: 60_000 },
    );
    kitBody = res.body;
    return res;
  });
  app.get("/other", () =>
    new Response(
      new ReadableStream({
        pull(controller) {
          controller.enqueue(new TextEncoder().encode("data: 1\n\n"));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    ));
  const open = () => metrics.streamsOpen.get({ kind: "other" });

  const kit = await app.request("/kit");
  assert.equal(kit.body, kitBody, "the kit's body is not passed through another stream");
  assert.equal(open(), 1);
  const reader = kit.body!.getReader();
  await reader.read();
  assert.equal(open(), 1);
  releases[0]();
  while (!(await reader.read()).done) { /* to the end */ }
  assert.equal(open(), 0);

  const cancelled = await app.request("/kit");
  assert.equal(open(), 1);
  await cancelled.body!.cancel();
  assert.equal(open(), 0, "a client going away closes it too");
  releases[1]();

  const other = await app.request("/other");
  assert.equal(open(), 1);
  assert.equal(await other.text(), "data: 1\n\n");
  assert.equal(open(), 0);
});
