/**
 * The run view: a finished run unfolded into its steps (GET /v1/runs/{id}/steps joined with the
 * run's `model_steps` by step number). A model step shows its time, time to first token, finish
 * reason, tokens and cost, and the model request as the provider received it (secrets masked by
 * the server); a tool step shows each call's arguments, result and duration. Usage and cost of a
 * run and of a session are summed by the server.
 */
import { api, enc } from "./api.js";
import { $, compact, h, pretty, short } from "./dom.js";

/** Tokens as "in 120 / out 35 tokens" (what the provider reported). */
export function tokens(usage) {
  if (!usage) return "no usage reported";
  const parts = [];
  if (usage.input_tokens !== undefined) parts.push("in " + usage.input_tokens);
  if (usage.output_tokens !== undefined) parts.push("out " + usage.output_tokens);
  if (usage.reasoning_tokens) parts.push("reasoning " + usage.reasoning_tokens);
  return parts.length ? parts.join(" / ") + " tokens" : "no usage reported";
}

/** A cost in the prices' currency, with the digits a small cost needs. */
export function cost(value) {
  if (typeof value !== "number") return "";
  return "cost " + value.toLocaleString("en-US", {
    maximumSignificantDigits: 3,
    maximumFractionDigits: 12,
    useGrouping: false,
  });
}

/** Milliseconds as "812 ms" or "1.24 s". */
function duration(ms) {
  return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(2) + " s";
}

/** "a · b · c" of the parts that are not empty. */
function joined(parts) {
  return parts.filter((p) => p).join(" \u00b7 ");
}

/** Usage and cost as one line ("in 40 / out 12 tokens · cost 0.000120"), or "". */
export function usageLine(usage, value) {
  return usage ? joined([tokens(usage), cost(value)]) : "";
}

/** The model request of a step, collapsed. */
function requestView(request) {
  if (!request) {
    return h("div", {
      class: "muted small-text",
      text: "Request not recorded (runtime.record_model_requests is off).",
    });
  }
  const size = request.bytes + " bytes" + (request.truncated ? ", truncated" : "");
  const head = request.url ? request.method + " " + request.url : "the call the provider received";
  return h(
    "details",
    { class: "model-request", dataset: { truncated: String(request.truncated) } },
    h("summary", { text: "Model request \u00b7 " + size }),
    h("div", { class: "small-text request-url", text: head }),
    request.headers
      ? h("pre", { class: "json request-headers", text: pretty(request.headers) })
      : null,
    h("pre", {
      class: "json request-body",
      text: typeof request.body === "string" ? request.body : pretty(request.body),
    }),
    request.truncated
      ? h("div", {
        class: "muted small-text",
        text: "\u2026 truncated: " + request.bytes + " bytes",
      })
      : null,
  );
}

/** One server tool call of a tool step. */
function toolView(call) {
  return h(
    "div",
    { class: "tool-trace", dataset: { tool: call.tool_name, error: String(call.is_error) } },
    h("div", {
      class: "tool-trace-head",
      text: joined([call.tool_name, duration(call.duration_ms), call.is_error ? "error" : ""]),
    }),
    h("pre", { class: "json tool-args", text: pretty(call.arguments) }),
    h("pre", { class: "json tool-result", text: pretty(call.result) }),
    call.emits
      ? h("pre", {
        class: "json tool-emits",
        title: "What the call emitted",
        text: call.emits.map((e) => e.name + " " + compact(e.value)).join("\n"),
      })
      : null,
  );
}

/** One step: its head line, then its request or its tool calls. */
function stepView(step, report) {
  const head = step.kind === "model"
    ? joined([
      "step " + step.step,
      "model",
      step.duration_ms !== undefined ? duration(step.duration_ms) : "",
      typeof step.first_token_ms === "number" ? "first token " + duration(step.first_token_ms) : "",
      report ? report.finish_reason : "",
      report ? tokens(report.usage) : "",
      report ? cost(report.cost) : "",
    ])
    : joined(["step " + step.step, "tools", duration(step.duration_ms)]);
  return h(
    "li",
    { class: "run-step", dataset: { step: String(step.step), kind: step.kind } },
    h("div", { class: "step-head", text: head }),
    step.error
      ? h("div", {
        class: "run-error step-error",
        text: step.error.code + ": " + step.error.message,
      })
      : null,
    step.kind === "model" && "request" in step ? requestView(step.request) : null,
    ...(step.tool_calls || []).map(toolView),
  );
}

/** The steps of a run: its step records, else its model report alone (older runs). */
function stepsOf(run, records) {
  const reports = Array.isArray(run.model_steps) ? run.model_steps : [];
  const reportOf = (n) => reports.find((r) => r.step === n);
  if (records.length === 0) {
    return reports.map((r) => stepView({ step: r.step, kind: "model" }, r));
  }
  return records.map((s) => stepView(s, s.kind === "model" ? reportOf(s.step) : null));
}

/**
 * A finished run's view: a summary (duration, model steps, tokens, cost) that unfolds into its
 * steps, read when first opened.
 */
export function runView(run) {
  const ms = Date.parse(run.updated_at) - Date.parse(run.created_at);
  const count = Array.isArray(run.model_steps) ? run.model_steps.length : 0;
  const list = h("ol", { class: "step-list" });
  const el = h(
    "details",
    { class: "run-steps", dataset: { runId: run.run_id } },
    h("summary", {
      text: joined([
        Number.isFinite(ms) ? (ms / 1000).toFixed(2) + " s" : "",
        count + " model step" + (count === 1 ? "" : "s"),
        tokens(run.usage),
        cost(run.cost),
      ]),
    }),
    list,
  );
  let loaded = false;
  el.addEventListener("toggle", async () => {
    if (!el.open || loaded) return;
    loaded = true;
    let records = [];
    try {
      records = (await api("GET", "/v1/runs/" + enc(run.run_id) + "/steps")).data;
    } catch {
      // Shown from the run record alone.
    }
    const wide = h("button", {
      type: "button",
      class: "small ghost run-wide",
      text: "Open wide",
      title: "Read the steps in a wide view",
      onclick: () => openWide(run, records),
    });
    list.replaceChildren(...stepsOf(run, records));
    list.before(wide);
    el.dataset.loaded = "true";
  });
  return el;
}

/** Shows a run's steps in the wide dialog (requests are easier to read there). */
function openWide(run, records) {
  $("run-dialog-title").textContent = "Run " + short(run.run_id) + " \u00b7 " + run.status;
  $("run-dialog-steps").replaceChildren(...stepsOf(run, records));
  /** @type {HTMLDialogElement} */ ($("run-dialog")).showModal();
}
