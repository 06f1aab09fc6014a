/**
 * A step's model request as the provider received it: credential headers masked by name, every
 * secret value redacted wherever it appears (URL, headers, body), the body parsed as JSON or cut
 * at the limit; a provider without HTTP gives the AI SDK call it received.
 */
import assert from "node:assert/strict";
import { sentRequest } from "../../src/models/sent_request.ts";
import { secretScrubber } from "../../src/secrets.ts";

const SECRET = "sk-live-0123456789abcdef";
const scrub = secretScrubber([SECRET]);

Deno.test("sent request: credentials masked, secrets redacted, the body as JSON", () => {
  const body = JSON.stringify({
    model: "gpt-test",
    messages: [{ role: "system", content: `Use the key ${SECRET} for tickets.` }],
  });
  const sent = sentRequest(
    {
      url: `https://api.example.test/v1/chat/completions?token=${SECRET}`,
      method: "POST",
      headers: new Headers({
        authorization: `Bearer ${SECRET}`,
        "x-api-key": "another-credential",
        "content-type": "application/json",
        "x-trace": `t-${SECRET}`,
      }),
      body,
    },
    undefined,
    scrub,
    65_536,
  );
  assert.equal(JSON.stringify(sent).includes(SECRET), false);
  assert.equal(JSON.stringify(sent).includes("another-credential"), false);
  assert.equal(sent.url, "https://api.example.test/v1/chat/completions?token=[redacted]");
  assert.equal(sent.method, "POST");
  assert.deepEqual(sent.headers, {
    authorization: "****",
    "content-type": "application/json",
    "x-api-key": "****",
    "x-trace": "t-[redacted]",
  });
  assert.deepEqual(sent.body, {
    model: "gpt-test",
    messages: [{ role: "system", content: "Use the key [redacted] for tickets." }],
  });
  assert.equal(sent.truncated, false);
  assert.equal(sent.bytes, new TextEncoder().encode(scrub(body)).length);
});

Deno.test("sent request: a body over the limit is its first bytes, marked truncated", () => {
  const body = JSON.stringify({ messages: ["x".repeat(1000), SECRET] });
  const sent = sentRequest(
    { url: "http://x.test/", method: "POST", headers: new Headers(), body },
    undefined,
    scrub,
    100,
  );
  assert.equal(sent.truncated, true);
  assert.equal(typeof sent.body, "string");
  assert.equal(new TextEncoder().encode(sent.body as string).length, 100);
  assert.equal(sent.bytes, body.length - SECRET.length + "[redacted]".length);
});

Deno.test("sent request: without HTTP, the AI SDK call without its signal", () => {
  const sent = sentRequest(
    undefined,
    {
      prompt: [{ role: "system", content: `secret ${SECRET}` }],
      tools: [{ type: "function", name: "add" }],
      abortSignal: new AbortController().signal,
      headers: { authorization: SECRET },
    },
    scrub,
    65_536,
  );
  assert.deepEqual(sent, {
    body: {
      prompt: [{ role: "system", content: "secret [redacted]" }],
      tools: [{ type: "function", name: "add" }],
    },
    bytes: sent.bytes,
    truncated: false,
  });
});
