/** The connection cap against the open-files limit (src/http/open_files.ts). */
import assert from "node:assert/strict";
import { connectionCap, DESCRIPTOR_RESERVE, openFilesLimit } from "../../src/http/open_files.ts";

Deno.test("the open-files limit is this process's soft limit", async () => {
  const limit = openFilesLimit();
  const soft = (await new Deno.Command("sh", { args: ["-c", "ulimit -n"] }).output()).stdout;
  assert.equal(String(limit), new TextDecoder().decode(soft).trim());
});

Deno.test("max_connections is served when the limit leaves room for it, lowered when not", () => {
  assert.equal(DESCRIPTOR_RESERVE, 511 + 64 + 256);
  assert.equal(connectionCap(4096, undefined), 4096);
  assert.equal(connectionCap(4096, 4096 + DESCRIPTOR_RESERVE), 4096);
  assert.equal(connectionCap(4096, 6000), 4096);
  assert.equal(connectionCap(4096, 4500), 4500 - DESCRIPTOR_RESERVE);
  assert.equal(connectionCap(4096, 1024), 1024 - DESCRIPTOR_RESERVE);
  assert.equal(connectionCap(4096, 100), 1);
});
