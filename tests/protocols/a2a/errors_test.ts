/**
 * What the add-on refuses, in each binding's error shape (errors.ts): unknown tasks, tasks that
 * cannot be cancelled or continued, what is not supported (push notifications, the extended card,
 * raw and URL parts), a wrong `A2A-Version`, malformed requests, unknown paths and methods.
 */
import assert from "node:assert/strict";
import type { Part } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { storeKinds, type TestServer } from "../../_kit/mod.ts";
import { fastManifest } from "./agents.ts";
import {
  asTask,
  message,
  nativeRun,
  overEachBinding,
  overHttpJson,
  rejects,
  request,
  restError,
  rpc,
  rpcError,
  text,
  type Transport,
} from "./sdk.ts";

for (const store of storeKinds) {
  Deno.test(`a2a errors (${store}): over HTTP+JSON, the SDK and raw`, (tt) =>
    overHttpJson(tt, store, fastManifest, restScenarios));
  Deno.test(`a2a errors (${store}): the same refusals on both bindings`, (tt) =>
    overEachBinding(tt, store, bindingScenarios));
}

/** Refusals over HTTP+JSON: the SDK's errors and the raw bodies. */
async function restScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
  await tt.step("errors: unknown task, not-cancelable, unsupported operations", async () => {
    const res = await t.fetch("/a2a/tasks/no-such-task");
    const error = await restError(res, 404, "TASK_NOT_FOUND");
    assert.equal(error.status, "NOT_FOUND");
    const info = error.details[0];
    assert.equal(info.domain, "a2a-protocol.org");
    assert.equal(info.metadata.taskId, "no-such-task");
    await rejects(client.getTask({ tenant: "", id: "no-such-task" }), "TASK_NOT_FOUND", 404);

    const done = asTask(await client.sendMessage(request(message([text("finished")]))));
    const e = await rejects(
      client.cancelTask({ tenant: "", id: done.id, metadata: undefined }),
      "TASK_NOT_CANCELABLE",
      400,
    );
    assert.equal(e.name, "TaskNotCancelableError");
    const raw = await t.fetch(`/a2a/tasks/${done.id}:cancel`, { method: "POST" });
    await restError(raw, 400, "TASK_NOT_CANCELABLE");
    assert.equal((await nativeRun(t, done.id)).status, "completed", "unchanged");

    await rejects(
      client.sendMessage(request(message([text("more")], { taskId: done.id }))),
      "UNSUPPORTED_OPERATION",
      400,
    );
    await rejects(
      client.sendMessage(
        request(message([text("x")], { taskId: done.id, contextId: "another-context" })),
      ),
      "INVALID_PARAMS",
      400,
    );
    await rejects(
      client.sendMessage(request(message([text("x")], { taskId: "no-such-task" }))),
      "TASK_NOT_FOUND",
      404,
    );

    // Push notifications: the config endpoints and a config on send.
    for (
      const [method, path] of [
        ["POST", `/a2a/tasks/${done.id}/pushNotificationConfigs`],
        ["GET", `/a2a/tasks/${done.id}/pushNotificationConfigs`],
        ["GET", `/a2a/tasks/${done.id}/pushNotificationConfigs/c1`],
        ["DELETE", `/a2a/tasks/${done.id}/pushNotificationConfigs/c1`],
      ]
    ) {
      const r = await t.fetch(path, {
        method,
        ...(method === "POST" ? { json: { url: "https://example.com/hook" } } : {}),
      });
      await restError(r, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    }
    await rejects(
      client.sendMessage(
        request(message([text("notify me")]), {
          taskPushNotificationConfig: {
            tenant: "",
            id: "",
            taskId: "",
            url: "https://example.com/hook",
            token: "",
            authentication: undefined,
          },
        }),
      ),
      "PUSH_NOTIFICATION_NOT_SUPPORTED",
      400,
    );
    const extended = await t.fetch("/a2a/extendedAgentCard");
    await restError(extended, 400, "UNSUPPORTED_OPERATION");
  });

  await tt.step("errors: raw and URL parts, version, malformed", async () => {
    const raw: Part = {
      content: { $case: "raw", value: new TextEncoder().encode("bytes") as never },
      metadata: undefined,
      filename: "a.bin",
      mediaType: "application/octet-stream",
    };
    await rejects(
      client.sendMessage(request(message([text("see file"), raw]))),
      "CONTENT_TYPE_NOT_SUPPORTED",
      400,
    );
    const url: Part = {
      content: { $case: "url", value: "https://example.com/a.png" },
      metadata: undefined,
      filename: "",
      mediaType: "image/png",
    };
    await rejects(
      client.sendMessage(request(message([url]))),
      "CONTENT_TYPE_NOT_SUPPORTED",
      400,
    );
    const version = await t.fetch("/a2a/message:send", {
      method: "POST",
      headers: { "A2A-Version": "0.3" },
      json: { message: { messageId: "v", role: "ROLE_USER", parts: [{ text: "x" }] } },
    });
    await restError(version, 400, "VERSION_NOT_SUPPORTED");
    const missing = await t.fetch("/a2a/message:send", { method: "POST", json: {} });
    const malformed = await restError(missing, 400, "INVALID_PARAMS");
    assert.equal(malformed.status, "INVALID_ARGUMENT");
    const violations = malformed.details.find((d: { "@type": string }) =>
      d["@type"] === "type.googleapis.com/google.rpc.BadRequest"
    );
    assert.ok(violations.fieldViolations.some((v: { field: string }) => v.field === "message"));
    const notJson = await t.fetch("/a2a/message:send", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    await restError(notJson, 400, "INVALID_PARAMS");
    const agentRole = await t.fetch("/a2a/message:send", {
      method: "POST",
      json: { message: { messageId: "r", role: "ROLE_AGENT", parts: [{ text: "x" }] } },
    });
    await restError(agentRole, 400, "INVALID_PARAMS");
    const badContext = await t.fetch("/a2a/message:send", {
      method: "POST",
      json: {
        message: {
          messageId: "c",
          contextId: "has spaces",
          role: "ROLE_USER",
          parts: [{ text: "x" }],
        },
      },
    });
    await restError(badContext, 400, "INVALID_PARAMS");
    const unknown = await t.fetch("/a2a/nothing/here/at/all");
    const body = await unknown.json();
    assert.equal(unknown.status, 404);
    assert.equal(body.error.status, "NOT_FOUND");
    const wrongMethod = await t.fetch("/a2a/message:send");
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get("allow"), "POST");
    await wrongMethod.body?.cancel();
  });
}

/** What is not supported, over each transport. */
async function bindingScenarios(
  tt: Deno.TestContext,
  t: TestServer,
  client: Client,
  transport: Transport,
): Promise<void> {
  await tt.step("not supported: push configs, extended card, raw and URL parts", async () => {
    // The SDK refuses push calls itself (the card says pushNotifications: false): ask raw.
    if (transport === "JSONRPC") {
      for (
        const method of ["CreateTaskPushNotificationConfig", "ListTaskPushNotificationConfigs"]
      ) {
        await rpcError(
          await rpc(t, { jsonrpc: "2.0", id: 7, method, params: { taskId: "t" } }),
          -32003,
        );
      }
      await rpcError(
        await rpc(t, { jsonrpc: "2.0", id: 8, method: "GetExtendedAgentCard" }),
        -32004,
      );
    } else {
      await restError(
        await t.fetch("/a2a/tasks/t/pushNotificationConfigs", { method: "GET" }),
        400,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
      );
      await restError(await t.fetch("/a2a/extendedAgentCard"), 400, "UNSUPPORTED_OPERATION");
    }
    const url = {
      content: { $case: "url" as const, value: "https://example.com/a.png" },
      metadata: undefined,
      filename: "",
      mediaType: "image/png",
    };
    await rejects(client.sendMessage(request(message([url]))), "CONTENT_TYPE_NOT_SUPPORTED");
  });
}
