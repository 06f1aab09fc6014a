/**
 * The one-sentence reasons an MCP server is down or could not connect: exit statuses and stderr of
 * a stdio server, HTTP statuses, timeouts, and never a URL.
 */
import assert from "node:assert/strict";
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  closedReason,
  failureReason,
  isUnreachable,
  withoutUrls,
} from "../../../src/tools/mcp/failures.ts";
import { ProcessTransport } from "../../../src/tools/mcp/mod.ts";
import { eventually } from "../../_kit/mod.ts";

Deno.test("failures: URLs never reach a message", () => {
  assert.equal(
    withoutUrls("error sending request for url (https://h.example/mcp?token=s3cret): refused"),
    "error sending request: refused",
  );
  assert.equal(withoutUrls("fetch http://10.0.0.1:8080/x failed"), "fetch failed");
  assert.equal(withoutUrls("no url here"), "no url here");
});

Deno.test("failures: what counts as an unreachable server", () => {
  assert.ok(isUnreachable(new TypeError("fetch failed")));
  const refused = new Error("refused");
  refused.name = "ConnectionRefused";
  assert.ok(isUnreachable(refused));
  assert.equal(isUnreachable(new Error("other")), false);
  assert.equal(isUnreachable(null), false);
});

Deno.test("failures: why an HTTP connection failed", () => {
  const http = new StreamableHTTPClientTransport(new URL("http://127.0.0.1:9/mcp"));
  assert.equal(closedReason(http), "the connection closed");
  assert.equal(
    failureReason(new McpError(ErrorCode.RequestTimeout, "late"), http, 500),
    "no answer within 500 ms",
  );
  assert.equal(
    failureReason(new StreamableHTTPError(401, "unauthorized"), http, 500),
    "the server answered HTTP 401: Streamable HTTP error: unauthorized",
  );
  assert.equal(
    failureReason(new TypeError("error sending request for url (http://127.0.0.1:9/mcp)"), http, 1),
    "cannot connect: TypeError: error sending request",
  );
  assert.equal(failureReason(new Error("broken"), http, 1), "broken");
});

Deno.test("failures: a stdio server's exit status and the end of its stderr", async () => {
  const transport = new ProcessTransport({
    command: ["/bin/sh", "-c", "echo one >&2; echo two >&2; exit 3"],
    env: {},
    cwd: "/",
  });
  let closed = false;
  transport.onclose = () => closed = true;
  await transport.start();
  await eventually(() => closed, { what: "the process to exit" });
  const reason = "the process exited with code 3; stderr: one | two";
  assert.equal(closedReason(transport), reason);
  // An exited process explains a failed connection better than the error the client saw.
  assert.equal(failureReason(new Error("Connection closed"), transport, 1), reason);
});
