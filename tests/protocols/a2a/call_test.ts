/**
 * Who asks (call.ts), the tenant: named by `X-Tenant-ID`, the `/{tenant}` path prefix, a body's or
 * params' `tenant`, or a card read with one; another tenant's task is unknown, and tenants named
 * differently in several places are refused.
 */
import assert from "node:assert/strict";
import { type Client, ClientFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { storeKinds, type TestServer } from "../../_kit/mod.ts";
import { fastManifest } from "./agents.ts";
import {
  assertSameAsNative,
  asTask,
  factoryFor,
  message,
  overEachBinding,
  overHttpJson,
  rejects,
  request,
  restError,
  text,
  type Transport,
  withHeaders,
} from "./sdk.ts";

for (const store of storeKinds) {
  Deno.test(`a2a call (${store}): tenants over HTTP+JSON, the SDK and raw`, (tt) =>
    overHttpJson(tt, store, fastManifest, restScenarios));
  Deno.test(`a2a call (${store}): tenants, the same scenarios on both bindings`, (tt) =>
    overEachBinding(tt, store, bindingScenarios));
}

/** Tenants over HTTP+JSON. */
async function restScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
  await tt.step("tenant isolation: header, path prefix, body, card", async () => {
    const acme = { serviceParameters: { "X-Tenant-ID": "acme" } };
    const task = asTask(await client.sendMessage(request(message([text("acme only")])), acme));
    await assertSameAsNative(t, task, "acme");
    assert.equal((await t.fetch(`/v1/runs/${task.id}`)).status, 404, "not in the default tenant");

    await rejects(client.getTask({ tenant: "", id: task.id }), "TASK_NOT_FOUND", 404);
    await rejects(
      client.cancelTask({ tenant: "", id: task.id, metadata: undefined }),
      "TASK_NOT_FOUND",
      404,
    );
    await rejects(
      client.getTask({ tenant: "globex", id: task.id }),
      "TASK_NOT_FOUND",
      404,
    );
    // The spec's `/{tenant}` prefix, as the SDK sends it.
    const viaPath = await client.getTask({ tenant: "acme", id: task.id });
    assert.equal(viaPath.id, task.id);
    assert.equal((await client.getTask({ id: task.id, tenant: "" }, acme)).id, task.id);

    // A task sent with the tenant in the body and path lands in that tenant.
    const inBody = asTask(
      await client.sendMessage(request(message([text("in body")]), {}, { tenant: "acme" })),
    );
    await assertSameAsNative(t, inBody, "acme");

    // A card read with a tenant names it, and a client built from it stays in that tenant.
    const card = await (await t.fetch("/a2a/.well-known/agent-card.json", { tenant: "acme" }))
      .json();
    assert.equal(card.supportedInterfaces[0].tenant, "acme");
    const acmeClient = await new ClientFactory({ transports: [new RestTransportFactory()] })
      .createFromAgentCard(card);
    const own = await acmeClient.getTask({ tenant: "", id: task.id });
    assert.equal(own.id, task.id);

    const conflict = await t.fetch("/a2a/acme/message:send", {
      method: "POST",
      tenant: "globex",
      json: { message: { messageId: "x", role: "ROLE_USER", parts: [{ text: "x" }] } },
    });
    await restError(conflict, 400, "INVALID_PARAMS");
  });
}

/** Tenants over each transport. */
async function bindingScenarios(
  tt: Deno.TestContext,
  t: TestServer,
  client: Client,
  transport: Transport,
): Promise<void> {
  await tt.step(
    "tenants: header, params/path, card; another tenant's task is unknown",
    async () => {
      const acme = withHeaders({ "X-Tenant-ID": "acme" });
      const task = asTask(await client.sendMessage(request(message([text("acme only")])), acme));
      await assertSameAsNative(t, task, "acme");
      await rejects(client.getTask({ tenant: "", id: task.id }), "TASK_NOT_FOUND");
      await rejects(client.getTask({ tenant: "globex", id: task.id }), "TASK_NOT_FOUND");
      assert.equal((await client.getTask({ tenant: "acme", id: task.id })).id, task.id);
      const inRequest = asTask(
        await client.sendMessage(request(message([text("in request")]), {}, { tenant: "acme" })),
      );
      await assertSameAsNative(t, inRequest, "acme");
      // A card read with a tenant names it; a client built from it stays in that tenant.
      const card = await (await t.fetch("/a2a/.well-known/agent-card.json", { tenant: "acme" }))
        .json();
      assert.deepEqual(card.supportedInterfaces.map((i: { tenant: string }) => i.tenant), [
        "acme",
        "acme",
      ]);
      const acmeClient = await factoryFor(transport).createFromAgentCard(card);
      assert.equal((await acmeClient.getTask({ tenant: "", id: task.id })).id, task.id);
      await rejects(
        client.getTask({ tenant: "acme", id: task.id }, withHeaders({ "X-Tenant-ID": "globex" })),
        "INVALID_PARAMS",
      );
    },
  );
}
