/**
 * Agent Card discovery (card.ts, discovery.ts): the official `@a2a-js/sdk` client finds the card
 * from the base URL (with its trailing slash, or at the host root without it), the card names
 * both bindings, follows a custom base path and public URL, and is cacheable.
 */
import assert from "node:assert/strict";
import { TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { startTestServer, storeKinds, type TestServer } from "../../_kit/mod.ts";
import { agent, bindingsManifest, fastManifest, OPTIONAL_EXT } from "./agents.ts";
import { asTask, message, overEachBinding, overHttpJson, request, text } from "./sdk.ts";
import { REASONING_EXTENSION, SOURCES_EXTENSION } from "../../../src/protocols/a2a/task.ts";

for (const store of storeKinds) {
  Deno.test(`a2a discovery (${store}): the Agent Card from the base URL`, (tt) =>
    overHttpJson(tt, store, fastManifest, restScenarios));
  Deno.test(`a2a discovery (${store}): the card names both bindings`, (tt) =>
    overEachBinding(tt, store, bindingScenarios));
}

/** The card as the SDK reads it over HTTP+JSON. */
async function restScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
  await tt.step("the Agent Card is found from the base URL", async () => {
    const card = await client.getAgentCard();
    assert.equal(card.name, "a2a-test");
    assert.equal(card.description, "An echo agent for the A2A tests");
    assert.equal(card.version, "1.2.3");
    assert.deepEqual(
      card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
      [
        [`${t.url}/a2a`, "JSONRPC", "1.0"],
        [`${t.url}/a2a`, "HTTP+JSON", "1.0"],
      ],
    );
    assert.equal(card.capabilities?.streaming, true);
    assert.equal(card.capabilities?.pushNotifications, false);
    assert.deepEqual(card.defaultInputModes, ["text/plain", "application/json"]);
    assert.deepEqual(card.defaultOutputModes, ["text/plain", "application/json"]);
    // No capability block: every tool is a skill.
    assert.deepEqual(card.skills.map((s) => s.id).sort(), ["bump", "pay"]);
    const raw = await t.fetch("/a2a/.well-known/agent-card.json");
    assert.match(raw.headers.get("content-type") ?? "", /^application\/json/);
  });
}

/** The card as the SDK reads it over each transport. */
async function bindingScenarios(
  tt: Deno.TestContext,
  t: TestServer,
  client: Client,
): Promise<void> {
  await tt.step(
    "the card names both bindings at the base URL; the client picks its own",
    async () => {
      const card = await client.getAgentCard();
      assert.deepEqual(
        card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
        [[`${t.url}/a2a`, "JSONRPC", "1.0"], [`${t.url}/a2a`, "HTTP+JSON", "1.0"]],
      );
      assert.equal(client.protocolVersion, "1.0");
      assert.deepEqual(card.capabilities?.extensions.map((e) => [e.uri, e.required]), [
        [OPTIONAL_EXT, false],
        // agentd's own, after the manifest's.
        [SOURCES_EXTENSION, false],
        [REASONING_EXTENSION, false],
      ]);
    },
  );
}

Deno.test("a2a: custom base path and public_url in the card", async () => {
  await using t = await startTestServer({
    manifest: {
      agent,
      http_server: {
        public_url: "https://agents.example.com/",
        protocol: { a2a: { path: "/agents/a2a" } },
      },
    },
  });
  const card = await (await t.fetch("/agents/a2a/.well-known/agent-card.json")).json();
  assert.equal(card.supportedInterfaces[0].url, "https://agents.example.com/agents/a2a");
  assert.deepEqual(card.skills.map((s: { tags: string[] }) => s.tags), [["chat"]]);
  const res = await t.fetch("/agents/a2a/message:send", {
    method: "POST",
    json: { message: { messageId: "p1", role: "ROLE_USER", parts: [{ text: "moved" }] } },
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.task.status.state, "TASK_STATE_COMPLETED");
  assert.equal((await t.fetch("/a2a/message:send", { method: "POST", json: {} })).status, 404);
});
Deno.test({
  name: "a2a: the root /.well-known/agent-card.json serves the card (base URL without slash)",
  async fn() {
    await using t = await startTestServer({ manifest: fastManifest });
    // Without the trailing slash the SDK resolves the card at the host's root.
    const client = await new ClientFactory({ transports: [new RestTransportFactory()] })
      .createFromUrl(`${t.url}/a2a`);
    const card = await client.getAgentCard();
    assert.equal(card.supportedInterfaces[0].url, `${t.url}/a2a`);
    const task = asTask(await client.sendMessage(request(message([text("from root")]))));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  },
});
Deno.test("a2a: the card is cacheable (Cache-Control, ETag, Last-Modified, 304)", async () => {
  await using t = await startTestServer({ manifest: bindingsManifest });
  for (const path of ["/a2a/.well-known/agent-card.json", "/.well-known/agent-card.json"]) {
    const first = await t.fetch(path);
    assert.equal(first.status, 200);
    const body = await first.text();
    const etag = first.headers.get("etag")!;
    const modified = first.headers.get("last-modified")!;
    assert.match(first.headers.get("cache-control") ?? "", /max-age=\d+/);
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    assert.ok(Date.parse(modified) <= Date.now());
    const again = await t.fetch(path, { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("etag"), etag);
    const weak = await t.fetch(path, { headers: { "If-None-Match": `"other", W/${etag}` } });
    assert.equal(weak.status, 304);
    await weak.body?.cancel();
    const changed = await t.fetch(path, { headers: { "If-None-Match": '"stale"' } });
    assert.equal(changed.status, 200);
    assert.equal(await changed.text(), body);
    const since = await t.fetch(path, { headers: { "If-Modified-Since": modified } });
    assert.equal(since.status, 304);
    await since.body?.cancel();
    // Another tenant's card is another document.
    const acme = await t.fetch(path, { tenant: "acme", headers: { "If-None-Match": etag } });
    assert.equal(acme.status, 200);
    assert.notEqual(acme.headers.get("etag"), etag);
    assert.match(acme.headers.get("vary") ?? "", /X-Tenant-ID/i);
    await acme.body?.cancel();
  }
});
