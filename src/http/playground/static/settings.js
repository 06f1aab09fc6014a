/**
 * Settings for the next run: the model override, the client tool, detached mode and the tenant,
 * remembered across reloads.
 */
import { $ } from "./dom.js";
import { saved } from "./storage.js";

/** The client tool the playground can offer; a call to it interrupts the run for an answer. */
export const ASK_USER = {
  name: "ask_user",
  description: "Ask the person using the playground a question and wait for the answer.",
  parameters: {
    type: "object",
    properties: { question: { type: "string", description: "The question to ask." } },
    required: ["question"],
  },
};

/** The ids of the settings fields remembered across reloads. */
export const MODEL_FIELDS = [
  "model-enabled",
  "model-provider",
  "model-name",
  "model-temperature",
  "model-max-tokens",
  "model-top-p",
  "model-seed",
  "model-params",
  "client-tool",
  "detached",
  "tenant",
];

/** Remembers the settings fields. */
export function saveSettings() {
  const values = {};
  for (const id of MODEL_FIELDS) {
    const el = $(id);
    values[id] = el.type === "checkbox" ? el.checked : el.value;
  }
  saved.set("settings", values);
  describeModel();
}

/** Fills the settings fields from what was remembered. */
export function restoreSettings() {
  const values = saved.get("settings", {});
  for (const id of MODEL_FIELDS) {
    if (!(id in values)) continue;
    const el = $(id);
    if (el.type === "checkbox") el.checked = Boolean(values[id]);
    else el.value = values[id];
  }
  describeModel();
}

function describeModel() {
  let text = "model: manifest";
  if ($("model-enabled").checked) {
    const provider = $("model-provider").value || "manifest";
    const model = $("model-name").value.trim();
    text = "model: " + provider + (model ? "/" + model : "");
    const raw = $("model-params").value.trim();
    if (raw) text += " " + raw.replace(/\s+/g, " ");
  }
  $("model-summary").textContent = text;
  $("model-summary").title = text;
}

/** The `model.override` of the next run from the settings, or null; throws on a bad field. */
export function modelOverride() {
  if (!$("model-enabled").checked) return null;
  const override = {};
  const provider = $("model-provider").value;
  const model = $("model-name").value.trim();
  if (provider) override.provider = provider;
  if (model) override.model = model;
  const params = {};
  const num = (id, key, int) => {
    const raw = $(id).value.trim();
    if (raw === "") return;
    const n = int ? parseInt(raw, 10) : parseFloat(raw);
    if (!Number.isFinite(n)) throw new Error("Model settings: " + key + " must be a number.");
    params[key] = n;
  };
  num("model-temperature", "temperature", false);
  num("model-max-tokens", "max_tokens", true);
  num("model-top-p", "top_p", false);
  num("model-seed", "seed", true);
  const raw = $("model-params").value.trim();
  if (raw) {
    let value;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error("Model settings: provider params must be JSON.");
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new Error("Model settings: provider params must be a JSON object.");
    }
    params.provider_params = value;
  }
  if (Object.keys(params).length > 0) override.inference_params = params;
  return override;
}
