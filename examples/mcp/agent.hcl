# An agent whose tools come from an MCP server: ./server.ts, a small notes server written with the
# official MCP SDK, which agentd starts and speaks to over stdio. Runs offline with the built-in
# echo model:
#
#   deno run -A --no-prompt main.ts serve examples/mcp/agent.hcl
#   deno run -A --no-prompt main.ts check examples/mcp/agent.hcl    (lists the tools)
#
# Then, in the playground at http://127.0.0.1:8080/ (or any client), say:
#
#   /call notes__add_note {"text": "buy milk"}
#   /call notes__list_notes
#   /call notes__review                 (progress arrives as live "progress" events)
#   /call notes__forget {"id": 42}      (an error result the model reads)
#
# See docs/tools.md#mcp-servers.

agent {
  name         = "notes"
  description  = "Keeps notes with the tools of an MCP server."
  instructions = <<EOT
You keep the user's notes with the notes tools. Answer briefly.
EOT
  capabilities = ["notes"]

  model {
    provider = "echo"
  }
}

# The capability names the whole server: every tool it offers, as notes__<tool>.
capability "notes" {
  description = "Saves, lists, reviews and deletes notes."
  tools       = ["notes"]
}

mcp_server "notes" {
  # Relative arguments are relative to cwd, which is this directory by default. The server needs
  # no Deno permission; deno itself is found on PATH.
  command = ["deno", "run", "--no-prompt", "./server.ts"]
  timeout = 10000
}

http_server {
  port = 8080

  protocol {
    ag_ui {}
  }
}
