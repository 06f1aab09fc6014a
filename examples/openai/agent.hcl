# An agent backed by OpenAI (or any OpenAI-compatible endpoint). Needs OPENAI_API_KEY:
#
#   OPENAI_API_KEY=sk-... deno run -A main.ts serve examples/openai/agent.hcl
#
# OPENAI_BASE_URL is optional; set it to use another OpenAI-compatible server.

agent {
  name         = "openai-assistant"
  description  = "A general assistant running on an OpenAI model."
  instructions = "You are a helpful assistant. Answer concisely."

  model {
    provider = "openai"
    model    = "gpt-4o-mini"
    api_key  = "${env.OPENAI_API_KEY}"
    base_url = "${env.OPENAI_BASE_URL:-https://api.openai.com/v1}"
    timeout  = 30000

    inference_params {
      temperature = 0.2
    }

    retry {
      max_attempts    = 3
      initial_backoff = 500
      max_backoff     = 5000
    }
  }
}

runtime {
  default_tenant_id = "default"
}

http_server {
  port = 8080

  protocol {
    ag_ui {}
    a2a {}
  }
}
