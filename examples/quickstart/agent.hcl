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

# Example tools (examples/quickstart/tools; see docs/tools.md). With no `capability` block, every
# tool here is offered to every run. Try them with the echo model: `/call progress {"steps": 5}`.

tool "progress" {
  description = "Works through a task step by step, reporting progress, and counts it in the state."
  kind        = "javascript"
  module      = "./tools/progress.ts"
  function    = "run"
  timeout     = 10000
  parameters = {
    type = "object"
    properties = {
      task  = { type = "string", description = "What to work on." }
      steps = { type = "integer", description = "How many steps (1-20).", minimum = 1, maximum = 20 }
    }
  }
}

tool "word_count" {
  description = "Counts the words of a text and remembers the count in the state."
  kind        = "python"
  module      = "./tools/word_count.py"
  function    = "count_words"
  timeout     = 10000
  parameters = {
    type     = "object"
    required = ["text"]
    properties = {
      text = { type = "string", description = "The text to count." }
    }
  }
}

# The same task runner behind an approval: a call interrupts the run until a person approves or
# rejects it (resume with `resume_payload.approvals`).
tool "deploy" {
  description       = "Deploys a task (simulated, with progress); needs a person's approval first."
  kind              = "javascript"
  module            = "./tools/progress.ts"
  function          = "run"
  timeout           = 10000
  requires_approval = true
  parameters = {
    type = "object"
    properties = {
      task  = { type = "string", description = "What to deploy." }
      steps = { type = "integer", description = "How many steps (1-20).", minimum = 1, maximum = 20 }
    }
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
