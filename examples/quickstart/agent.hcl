# The smallest useful agent: the built-in "echo" provider answers without any API key, so this
# manifest runs anywhere. Serve it with:
#
#   deno task dev        (or: deno run -A main.ts serve examples/quickstart/agent.hcl)
#
# See docs/configuration.md for every block and attribute.

agent {
  name         = "quickstart"
  description  = "A minimal agent that echoes what you say; a starting point for your own."
  instructions = <<EOT
You are a friendly assistant. Answer briefly and clearly.
EOT

  model {
    provider = "echo"
  }
}

runtime {
  default_tenant_id = "default"
  # No storage block: SQLite in ./.agentd/agentd.db under the working directory.
}

http_server {
  port = 8080

  protocol {
    ag_ui {}
    a2a {}
  }
}
