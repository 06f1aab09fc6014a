/**
 * Secrets never leave (issue 12, Deliver 4): a provider whose error bodies repeat the API key it
 * was sent, and tools that repeat a credential they were granted, over every protocol. The key
 * and the token appear nowhere: not in the native stream, the stored run, messages and
 * checkpoints, AG-UI, A2A (send, stream, task read), the logs or the metrics; the clients still
 * learn what went wrong, with `[redacted]` where the secret was.
 */
import assert from "node:assert/strict";
import { readEvents, startTestServer, userText } from "./_kit/mod.ts";
import { httpError, startFakeOpenAI, textFrames } from "./models/fake_openai.ts";
import { REDACTED, secretScrubber, secretValues } from "../src/secrets.ts";

// Shorter than the 12 characters a variable needs to count as a secret by its name alone: the
// provider's own key variable is a secret whatever its length.
const API_KEY = "k3y-Zq9xW1";
const TOKEN = "svc-token-4e1f0b7d2c";
const fixtures = new URL("./fixtures/", import.meta.url).pathname;
const echo = { override: { provider: "echo" } };

Deno.test("scrubber: values replaced deeply, keys too, other data kept", () => {
  const scrub = secretScrubber(["s3cr3t-value", "short", undefined]);
  assert.deepEqual(
    scrub({ a: ["x s3cr3t-value y", 1, null], "s3cr3t-value": true, token: "plain" }),
    { a: [`x ${REDACTED} y`, 1, null], [REDACTED]: true, token: "plain" },
  );
  assert.equal(scrub("short stays"), "short stays");
  const deep = JSON.parse("[".repeat(400) + '"s3cr3t-value"' + "]".repeat(400));
  assert.ok(!JSON.stringify(scrub(deep)).includes("s3cr3t-value"));
  const values = secretValues({ manifest: {} }, {
    OPENAI_API_KEY: "tiny-key",
    SOME_API_KEY: "short",
    OTHER_TOKEN: "long-enough-token",
    DATABASE: "postgres://u:pa55w0rd@db/x",
  }, { credentialEnv: ["OPENAI_API_KEY"] });
  assert.deepEqual(values.sort(), ["long-enough-token", "pa55w0rd", "pa55w0rd", "tiny-key"]);
});

Deno.test("a key or token repeated by a provider or a tool reaches no client, record or log", async () => {
  await using fake = startFakeOpenAI();
  // By default every request is refused with OpenAI's wording, which repeats the key.
  const refused = () =>
    httpError(401, `Incorrect API key provided: ${API_KEY}. You can find your API key at ...`);
  const saved = { key: Deno.env.get("OPENAI_API_KEY"), token: Deno.env.get(TOKEN_VAR) };
  Deno.env.set("OPENAI_API_KEY", API_KEY);
  Deno.env.set(TOKEN_VAR, TOKEN);
  await using t = await startTestServer({
    manifest: {
      agent: {
        name: "leaky",
        model: {
          provider: "openai",
          model: "gpt-test",
          base_url: fake.url,
          retry: { max_attempts: 1, initial_backoff: 1, max_backoff: 1 },
        },
      },
      tool: {
        leak_error: {
          kind: "javascript",
          module: `${fixtures}leaky_tools.js`,
          function: "leakError",
          permissions: { env: [TOKEN_VAR] },
        },
        leak_result: {
          kind: "javascript",
          module: `${fixtures}leaky_tools.js`,
          function: "leakResult",
          permissions: { env: [TOKEN_VAR] },
        },
      },
      http_server: { protocol: { ag_ui: {}, a2a: {} } },
    },
  });
  /** Every byte a client received. */
  const seen: string[] = [];
  const body = async (res: Response) => {
    const text = await res.text();
    seen.push(text);
    return text;
  };
  try {
    // 1. Refused at establishment (HTTP 401 whose body repeats the key).
    fake.enqueue(refused());
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: { session_id: "s1", messages: [userText("hello")] },
    });
    const events = await readEvents(new Response(await body(res)));
    const end = events.at(-1)!;
    assert.equal(end.status, "failed");
    const error = end.error as { code: string; message: string };
    assert.equal(error.code, "model_auth");
    assert.ok(error.message.includes(`Incorrect API key provided: ${REDACTED}`), error.message);
    // The provider really was sent the key: the test is not vacuous.
    assert.equal(fake.requests[0].headers.get("authorization"), `Bearer ${API_KEY}`);

    // 2. An error event after output started (mid-stream, not retried).
    fake.enqueue({
      kind: "sse",
      frames: [
        ...textFrames(["partial "]).slice(0, 2),
        { data: { error: { message: `quota for key ${API_KEY} exceeded`, type: "server_error" } } },
      ],
    });
    await body(
      await t.fetch("/v1/runs", {
        method: "POST",
        json: { session_id: "s2", messages: [userText("hello")] },
      }),
    );

    // 3. Tools: an error, a result, an emit and a state update holding the token.
    const toolRun = await body(
      await t.fetch("/v1/runs", {
        method: "POST",
        json: {
          session_id: "s3",
          model: echo,
          messages: [userText("/call leak_error {}\n/call leak_result {}")],
        },
      }),
    );
    assert.ok(toolRun.includes(`upstream refused token ${REDACTED}`), toolRun);
    assert.ok(toolRun.includes(`"echoed":"${REDACTED}"`), toolRun);
    assert.ok(toolRun.includes(`using ${REDACTED}`), toolRun);

    // 4. AG-UI and A2A runs refused the same way.
    fake.enqueue(refused(), refused(), refused());
    const agUi = await body(
      await t.fetch("/ag-ui/run", {
        method: "POST",
        json: {
          threadId: "s4",
          runId: "r4",
          messages: [{ id: "u4", role: "user", content: "hi" }],
          tools: [],
          context: [],
          state: {},
          forwardedProps: {},
        },
      }),
    );
    assert.match(agUi, /RUN_ERROR/);
    const sent = JSON.parse(
      await body(
        await t.fetch("/a2a/message:send", {
          method: "POST",
          json: { message: { messageId: "a1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
        }),
      ),
    );
    assert.equal(sent.task.status.state, "TASK_STATE_FAILED");
    await body(await t.fetch(`/a2a/tasks/${sent.task.id}`));
    await body(
      await t.fetch("/a2a/message:stream", {
        method: "POST",
        json: { message: { messageId: "a2", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      }),
    );

    // Everything stored: runs, messages, checkpoints of every session.
    for (const id of ["s1", "s2", "s3", "s4", sent.task.contextId]) {
      await body(await t.fetch(`/v1/sessions/${id}/runs`));
      await body(await t.fetch(`/v1/sessions/${id}/messages`));
      await body(await t.fetch(`/v1/sessions/${id}/checkpoints`));
    }
    await body(await t.fetch("/metrics"));

    const all = [...seen, ...t.logs].join("\n");
    assert.ok(all.includes(REDACTED), "the failures were reported");
    for (const secret of [API_KEY, TOKEN]) {
      const at = all.indexOf(secret);
      assert.equal(at, -1, `'${secret}' leaked: ...${all.slice(at - 200, at + 50)}`);
    }
  } finally {
    restore("OPENAI_API_KEY", saved.key);
    restore(TOKEN_VAR, saved.token);
  }
});

const TOKEN_VAR = "AGENTD_TEST_SERVICE_TOKEN";

function restore(name: string, value: string | undefined): void {
  if (value === undefined) Deno.env.delete(name);
  else Deno.env.set(name, value);
}
