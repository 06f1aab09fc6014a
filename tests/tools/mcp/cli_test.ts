/**
 * `agentd check` with MCP servers: it starts them, lists their tools (notes on stderr), masks
 * their headers and environment, and exits 2 when one cannot start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHttpMcpServer } from "./fixtures/http_server.ts";
import { DENO_JSON, STDIO_COMMAND } from "./helpers.ts";

const MAIN = join(import.meta.dirname!, "../../../main.ts");
const SECRET = "mcp-cli-secret-0123456789";

/** Runs `agentd check` (or another `command`) on the manifest text, from a temp directory. */
async function agentd(manifest: string, env: Record<string, string> = {}, command = "check") {
  const dir = await Deno.makeTempDir({ prefix: "agentd_mcp_cli_" });
  try {
    const path = join(dir, "agent.hcl");
    await Deno.writeTextFile(path, manifest);
    const base = Object.entries(Deno.env.toObject()).filter(([k]) => !k.startsWith("AGENT__"));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-prompt", "--config", DENO_JSON, MAIN, command, path],
      env: { ...Object.fromEntries(base), NO_COLOR: "1", ...env },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const hclList = (items: string[]) => `[${items.map((i) => JSON.stringify(i)).join(", ")}]`;

Deno.test("check lists the MCP tools and masks headers and environment", async () => {
  await using http = startHttpMcpServer();
  const result = await agentd(
    `agent {
  name = "mcp"
}
mcp_server "local" {
  command = ${hclList(STDIO_COMMAND)}
  env     = { TOKEN = "\${env.MCP_SECRET}" }
}
mcp_server "remote" {
  url     = "${http.url}"
  headers = { Authorization = "Bearer \${env.MCP_SECRET}" }
  tools   = ["echo", "look.up"]
}
`,
    { MCP_SECRET: SECRET },
  );
  assert.equal(result.code, 0, result.stderr);
  const printed = JSON.parse(result.stdout);
  assert.deepEqual(printed.manifest.mcp_server.local.env, { TOKEN: "****" });
  assert.deepEqual(printed.manifest.mcp_server.remote.headers, { Authorization: "****" });
  assert.ok(!result.stdout.includes(SECRET) && !result.stderr.includes(SECRET));
  assert.match(
    result.stderr,
    /^note: mcp_server "local" \(stdio\): 11 tool\(s\): local__echo, /m,
  );
  assert.match(
    result.stderr,
    /^note: mcp_server "remote" \(http\): 2 tool\(s\): remote__echo, remote__look_up_[0-9a-f]{8} \(MCP name "look.up"\)$/m,
  );
  assert.equal(http.calls.length, 0, "check calls no tool");
});

Deno.test("check exits 2 naming an MCP server that cannot start", async () => {
  const result = await agentd(`agent {
  name = "mcp"
}
mcp_server "broken" {
  command = ${hclList([Deno.execPath(), "eval", "console.error('missing API key'); Deno.exit(4)"])}
}
`);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^error: .*agent\.hcl cannot run:$/m);
  assert.match(
    result.stderr,
    /^mcp_server 'broken': cannot start: the process exited with code 4; stderr: missing API key$/m,
  );
  assert.equal(result.stdout, "");
});

Deno.test("serve exits 2 naming an MCP server that cannot start", async () => {
  const result = await agentd(
    `agent {
  name = "mcp"
}
mcp_server "broken" {
  command = ["/nonexistent/mcp-server"]
}
runtime {
  storage {
    path = ":memory:"
  }
}
http_server {
  port = 0
}
`,
    {},
    "serve",
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /^mcp_server 'broken': cannot start: the program '\/nonexistent\/mcp-server' was not found/m,
  );
});
