/**
 * `GET /v1/agent`: the agent as the server runs it — name, model, the manifest's tools and an MCP
 * server's with their schemas and kinds, capabilities, the protocols on — the same for every
 * tenant, and in the OpenAPI document.
 */
import assert from "node:assert/strict";
import { startTestServer } from "../../_kit/mod.ts";
import { STDIO_COMMAND } from "../../tools/mcp/helpers.ts";
import denoConfig from "../../../deno.json" with { type: "json" };

const TOOLS = new URL("../../tools/fixtures/js_tools.ts", import.meta.url).pathname;

const ADD_PARAMETERS = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
};

Deno.test("GET /v1/agent describes the agent, its tools, capabilities and protocols", async () => {
  await using t = await startTestServer({
    manifest: {
      agent: {
        name: "calculator",
        description: "Adds numbers.",
        version: "2.1.0",
        model: { provider: "echo" },
        capabilities: ["maths"],
        max_steps: 7,
      },
      tool: {
        add: {
          kind: "javascript",
          module: TOOLS,
          function: "echoContext",
          description: "Adds a and b.",
          parameters: ADD_PARAMETERS,
        },
        shout: {
          kind: "javascript",
          module: TOOLS,
          function: "progress",
          requires_approval: true,
        },
      },
      capability: {
        maths: { description: "Numbers.", tools: ["add", "local"] },
        loud: { tools: ["shout"] },
      },
      mcp_server: { local: { command: STDIO_COMMAND } },
      http_server: { protocol: { ag_ui: {}, a2a: {} } },
    },
  });
  const res = await t.fetch("/v1/agent");
  assert.equal(res.status, 200);
  const agent = await res.json();
  assert.equal(agent.name, "calculator");
  assert.equal(agent.description, "Adds numbers.");
  assert.equal(agent.version, "2.1.0");
  assert.equal(agent.agentd_version, denoConfig.version);
  assert.deepEqual(agent.model, { provider: "echo", model: "echo" });
  assert.equal(agent.max_steps, 7);
  const byName = new Map(agent.tools.map((tool: { name: string }) => [tool.name, tool]));
  assert.deepEqual(byName.get("add"), {
    name: "add",
    description: "Adds a and b.",
    kind: "javascript",
    parameters: ADD_PARAMETERS,
    requires_approval: false,
  });
  assert.deepEqual(byName.get("shout"), {
    name: "shout",
    description: "",
    kind: "javascript",
    parameters: { type: "object", properties: {} },
    requires_approval: true,
  });
  const mcpAdd = byName.get("local__add") as Record<string, unknown>;
  assert.ok(mcpAdd, `an MCP tool is listed: ${[...byName.keys()]}`);
  assert.equal(mcpAdd.kind, "mcp");
  assert.equal(mcpAdd.mcp_server, "local");
  assert.equal((mcpAdd.parameters as { type: string }).type, "object");
  assert.deepEqual(agent.capabilities, [
    { name: "maths", description: "Numbers.", tools: ["add", "local"], default: true },
    { name: "loud", tools: ["shout"], default: false },
  ]);
  assert.deepEqual(agent.protocols.map((p: { name: string }) => p.name), [
    "native",
    "ag_ui",
    "a2a",
  ]);
  assert.deepEqual(agent.protocols[0], { name: "native", path: "/v1" });
  // Not a tenant's data: another tenant reads the same description.
  const other = await t.fetch("/v1/agent", { headers: { "x-tenant-id": "acme" } });
  assert.deepEqual(await other.json(), agent);
});

Deno.test("GET /v1/agent is in the OpenAPI document, and refuses a query", async () => {
  await using t = await startTestServer();
  const doc = await (await t.fetch("/v1/openapi.json")).json();
  const operation = doc.paths["/v1/agent"]?.get;
  assert.ok(operation, "GET /v1/agent is documented");
  assert.equal(operation.operationId, "getAgent");
  assert.deepEqual(operation.tags, ["Agent"]);
  assert.equal(
    operation.responses["200"].content["application/json"].schema.$ref,
    "#/components/schemas/AgentDescription",
  );
  assert.ok(doc.components.schemas.AgentTool);
  const bad = await t.fetch("/v1/agent?x=1");
  assert.equal(bad.status, 422);
  await bad.body?.cancel();
});
