/**
 * The agent panel: what `GET /v1/agent` says of the agent this server runs (name, model, tools
 * with their schemas, capabilities, protocols), and the "Try" suggestions made from its own tools.
 */
import { authHeaders } from "./api.js";
import { $, h } from "./dom.js";

/** Reads `GET /v1/agent` and shows it; a failure leaves a note in the panel. */
export async function loadAgent() {
  let agent;
  try {
    const res = await fetch("/v1/agent", { headers: authHeaders({ accept: "application/json" }) });
    if (!res.ok) throw new Error("HTTP " + res.status);
    agent = await res.json();
  } catch (err) {
    $("agent-summary").textContent = "Could not read the agent: " + String(err);
    return;
  }
  $("agent-name").textContent = agent.name;
  $("agent-summary").textContent = agent.description || "";
  $("agent-model").textContent = agent.model.provider + " / " + agent.model.model;
  $("agent-protocols").textContent = agent.protocols.map((p) => p.name + " " + p.path).join(", ");
  $("agent-tools").replaceChildren(
    ...(agent.tools.length === 0 ? [h("li", { class: "muted", text: "No tools." })] : []),
    ...agent.tools.map((tool) =>
      h(
        "li",
        { class: "agent-tool", dataset: { tool: tool.name, kind: tool.kind } },
        h(
          "details",
          {},
          h(
            "summary",
            {},
            h("code", { text: tool.name }),
            " ",
            h("span", {
              class: "muted",
              text: tool.kind + (tool.requires_approval ? ", approval" : ""),
            }),
          ),
          tool.description ? h("p", { class: "small-text", text: tool.description }) : null,
          h("pre", { class: "json", text: JSON.stringify(tool.parameters, null, 2) }),
        ),
      )
    ),
  );
  $("agent-capabilities").textContent = agent.capabilities.length === 0
    ? "none: every tool is offered"
    : agent.capabilities.map((c) => c.name + (c.default ? " (default)" : "")).join(", ");
  showSuggestions(agent.tools);
}

/** "Try" chips: a `/call` line for each of the agent's tools (the echo model runs them). */
function showSuggestions(tools) {
  const chips = tools.slice(0, 6).map((tool) =>
    h("button", {
      type: "button",
      class: "chip",
      dataset: { fill: "/call " + tool.name + " " + JSON.stringify(exampleArgs(tool.parameters)) },
      text: tool.name + (tool.requires_approval ? " (approval)" : ""),
      onclick: (/** @type {Event} */ e) => {
        const chip = /** @type {HTMLElement} */ (e.currentTarget);
        $("message").value = chip.dataset.fill;
        $("message").focus();
      },
    })
  );
  $("suggestions").replaceChildren(h("span", { class: "muted", text: "Try:" }), ...chips);
  $("suggestions").hidden = chips.length === 0;
}

/** Arguments that fit a JSON Schema well enough to try a tool: its required fields, or the first. */
function exampleArgs(schema) {
  const properties = (schema && schema.properties) || {};
  const names = Object.keys(properties);
  const required = Array.isArray(schema && schema.required) ? schema.required : names.slice(0, 2);
  const args = {};
  for (const name of required) args[name] = exampleValue(properties[name] || {});
  return args;
}

function exampleValue(schema) {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? Math.max(schema.minimum, 3) : 3;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "example";
  }
}
