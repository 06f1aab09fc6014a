/**
 * `mcp_server` blocks in the manifest (`src/config/schema/mcp_server.ts`): parsing,
 * interpolation, validation, paths and secrets.
 */
import assert from "node:assert/strict";
import { maskSecrets } from "../../../src/config/mask.ts";
import { secretValues } from "../../../src/secrets.ts";
import { hcl as parse, MINIMAL, problems } from "../helpers.ts";

/** Parses `text` after a minimal agent block. */
function hcl(text: string, env: Record<string, string> = {}) {
  return parse(`${MINIMAL}${text}`, env);
}

const BOTH = `
mcp_server "files" {
  command = ["./bin/files-server", "--root", "data"]
  env     = { FILES_TOKEN = "\${env.FILES_TOKEN}", MODE = "ro" }
  tools   = ["read_file"]
}

mcp_server "github" {
  url           = "https://mcp.example.com/mcp"
  headers       = { Authorization = "Bearer \${env.GH_TOKEN}" }
  tenant_header = "X-Tenant-ID"
  timeout       = 5000
}
`;

Deno.test("mcp_server blocks: stdio and Streamable HTTP, with ${env.X} in env and headers", async () => {
  const { manifest } = await hcl(BOTH, { FILES_TOKEN: "files-secret", GH_TOKEN: "gh-secret" });
  assert.deepEqual(manifest.mcp_server, {
    files: {
      // A program given as a relative path and the working directory are the manifest's.
      command: ["/srv/agent/bin/files-server", "--root", "data"],
      cwd: "/srv/agent",
      env: { FILES_TOKEN: "files-secret", MODE: "ro" },
      tools: ["read_file"],
      timeout: 30_000,
    },
    github: {
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer gh-secret" },
      tenant_header: "X-Tenant-ID",
      timeout: 5000,
    },
  });
});

Deno.test("mcp_server: a bare program is looked up on PATH; cwd is relative to the manifest", async () => {
  const { manifest } = await hcl(`
mcp_server "fs" {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
  cwd     = "workspace"
}`);
  assert.deepEqual(manifest.mcp_server.fs.command, [
    "npx",
    "-y",
    "@modelcontextprotocol/server-filesystem",
    ".",
  ]);
  assert.equal(manifest.mcp_server.fs.cwd, "/srv/agent/workspace");
});

Deno.test("mcp_server: one transport, and each attribute on its own transport", async () => {
  assert.deepEqual(await problems(hcl(`mcp_server "x" {\n  timeout = 5\n}`)), [
    'mcp_server.x: give either command = [...] (a stdio server) or url = "..." (Streamable HTTP)',
  ]);
  assert.deepEqual(
    await problems(hcl(`mcp_server "x" {\n  command = ["a"]\n  url = "http://h/mcp"\n}`)),
    ['mcp_server.x: give either command = [...] (a stdio server) or url = "..." (Streamable HTTP)'],
  );
  assert.deepEqual(
    await problems(hcl(`mcp_server "x" {\n  command = ["a"]\n  headers = { A = "b" }\n}`)),
    [
      "mcp_server.x.headers: headers applies to Streamable HTTP servers (url), not to stdio " +
      "servers (command)",
    ],
  );
  assert.deepEqual(
    await problems(hcl(`mcp_server "x" {\n  url = "http://h/mcp"\n  env = { A = "b" }\n}`)),
    ["mcp_server.x.env: env applies to stdio servers (command), not to Streamable HTTP servers (url)"],
  );
  const [scheme] = await problems(hcl(`mcp_server "x" {\n  url = "ftp://h/mcp"\n}`));
  assert.match(scheme, /^mcp_server\.x\.url: must be an http:\/\/ or https:\/\/ URL/);
  const [empty] = await problems(hcl(`mcp_server "x" {\n  command = []\n}`));
  assert.match(empty, /^mcp_server\.x\.command: too small/);
});

Deno.test("check masks header and env values; logs scrub them", async () => {
  const config = await hcl(BOTH, { FILES_TOKEN: "files-secret", GH_TOKEN: "gh-secret-token" });
  const masked = maskSecrets(config);
  assert.deepEqual(masked.manifest.mcp_server.files.env, { FILES_TOKEN: "****", MODE: "****" });
  assert.deepEqual(masked.manifest.mcp_server.github.headers, { Authorization: "****" });
  assert.equal(masked.manifest.mcp_server.github.tenant_header, "X-Tenant-ID");
  assert.doesNotMatch(JSON.stringify(masked), /secret/);
  const secrets = secretValues(config);
  assert.ok(secrets.includes("files-secret"));
  assert.ok(secrets.includes("Bearer gh-secret-token"));
});
