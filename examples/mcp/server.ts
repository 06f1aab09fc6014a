/**
 * A small MCP server for the example agent: notes kept in memory, written with the official MCP
 * SDK and spoken to over stdio. agentd starts it (see agent.hcl); to try it on its own:
 *
 *   deno run --no-prompt examples/mcp/server.ts
 *
 * (outside this repository, import `npm:@modelcontextprotocol/sdk@1.32.2/server/mcp.js`... instead).
 * It needs no permission at all: stdin and stdout are its only channel.
 */
// The imports resolve through the repository's deno.json (Deno finds it from the working
// directory). The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist,
// hence the @ts-types comments.
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const notes: { id: number; text: string }[] = [];
const server = new McpServer({ name: "notes", version: "1.0.0" });

server.registerTool("add_note", {
  description: "Saves a note and returns its id.",
  inputSchema: { text: z.string().min(1).describe("What to remember.") },
  outputSchema: { id: z.number(), count: z.number() },
}, ({ text }) => {
  const note = { id: notes.length + 1, text };
  notes.push(note);
  const result = { id: note.id, count: notes.length };
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
});

server.registerTool("list_notes", {
  description: "Lists the saved notes, one per line.",
  inputSchema: {},
}, () => ({
  content: [{
    type: "text",
    text: notes.length ? notes.map((n) => `${n.id}. ${n.text}`).join("\n") : "no notes yet",
  }],
}));

server.registerTool("review", {
  description: "Reads every note slowly, reporting progress, and counts their words.",
  inputSchema: {},
}, async (_args, extra) => {
  const token = extra._meta?.progressToken;
  let words = 0;
  for (const [i, note] of notes.entries()) {
    words += note.text.split(/\s+/).filter(Boolean).length;
    if (token !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: i + 1,
          total: notes.length,
          message: `read note ${note.id}`,
        },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { content: [{ type: "text", text: `${notes.length} notes, ${words} words` }] };
});

server.registerTool("forget", {
  description: "Deletes a note by id.",
  inputSchema: { id: z.number().int().positive() },
}, ({ id }) => {
  const index = notes.findIndex((n) => n.id === id);
  if (index < 0) return { content: [{ type: "text", text: `no note ${id}` }], isError: true };
  notes.splice(index, 1);
  return { content: [{ type: "text", text: `forgot note ${id}` }] };
});

await server.connect(new StdioServerTransport());
