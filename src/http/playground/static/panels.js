/**
 * The run panels on the right: progress, the agent state with its changes, tool events and the
 * event log.
 */
import { $, clock, compact, h } from "./dom.js";
import { ui } from "./page.js";

const MAX_LOG = 300;

const MAX_CUSTOMS = 30;

/** Empties the run panels for another session. */
export function resetRunPanels() {
  $("progress").value = 0;
  $("progress-panel").dataset.active = "false";
  $("progress-label").textContent = "No progress reported yet.";
  $("customs").replaceChildren(h("li", { class: "muted", text: "None yet." }));
  $("state-changes").replaceChildren();
  $("events").replaceChildren();
  $("step").textContent = "";
  setContext(null, null, false);
}

/** Shows the agent state, the patch operations that led to it, and flashes a change. */
export function setContext(context, delta, flash) {
  const same = JSON.stringify(context) === JSON.stringify(ui.context);
  ui.context = context === undefined ? null : context;
  const el = $("state");
  el.textContent = ui.context === null ? "null" : JSON.stringify(ui.context, null, 2);
  if (flash && !same) {
    el.classList.remove("flash");
    void el.offsetWidth;
    el.classList.add("flash");
  }
  for (const op of delta || []) {
    const li = h(
      "li",
      { title: compact(op) },
      h("span", { class: "op", text: op.op }),
      " " + op.path + ("value" in op ? " = " + JSON.stringify(op.value) : "") +
        ("from" in op ? " from " + op.from : ""),
    );
    $("state-changes").prepend(li);
  }
  while ($("state-changes").children.length > 6) $("state-changes").lastChild.remove();
}

/** A progress value in [0, 1] from a custom event, or null when it reports none. */
function progressOf(name, value) {
  let v = null;
  if (typeof value === "number" && /progress/i.test(name)) v = value;
  else if (value && typeof value === "object") {
    // MCP progress (docs/tools.md#calls) counts up to a total when it has one.
    if (typeof value.progress === "number" && typeof value.total === "number" && value.total > 0) {
      v = value.progress / value.total;
    } else if (typeof value.progress === "number") v = value.progress;
    else if (typeof value.value === "number" && /progress/i.test(name)) v = value.value;
  }
  if (v === null || !Number.isFinite(v)) return null;
  if (v > 1 && v <= 100) v = v / 100;
  return Math.min(Math.max(v, 0), 1);
}

/** Shows a tool's custom event, and its progress when it reports some. */
export function onCustom(name, value) {
  const v = progressOf(name, value);
  if (v !== null) {
    $("progress").value = v;
    $("progress-panel").dataset.active = v >= 1 ? "done" : "true";
    const task = value && typeof value === "object" && typeof value.task === "string"
      ? value.task + ": "
      : "";
    $("progress-label").textContent = task + Math.round(v * 100) + "%";
  }
  const list = $("customs");
  if (list.firstElementChild?.classList.contains("muted")) list.replaceChildren();
  list.prepend(h(
    "li",
    { title: compact(value) },
    h("code", { text: name }),
    h("code", { class: "muted", text: compact(value) }),
  ));
  while (list.children.length > MAX_CUSTOMS) list.lastChild.remove();
}

/** Appends a run event to the event log (bounded). */
export function logEvent(ev) {
  const list = $("events");
  let detail = "";
  if (ev.kind === "text_message_content" || ev.kind === "tool_call_args") {
    detail = compact(ev.delta);
  } else if (ev.kind === "tool_call_start") detail = ev.tool_name;
  else if (ev.kind === "custom") detail = ev.name + " " + compact(ev.value);
  else if (ev.kind === "run_finished") detail = ev.status;
  else if (ev.kind === "step_started" || ev.kind === "step_finished") {
    detail = ev.step + " " + ev.step_name;
  } else if (ev.kind === "state_delta") detail = compact(ev.delta);
  const t = new Date((ev.timestamp || Date.now() / 1000) * 1000);
  list.append(h(
    "li",
    { title: compact(ev) },
    h("span", { class: "t", text: clock(t.toISOString()) }),
    h("span", { class: "kind", text: ev.kind }),
    h("span", { text: detail }),
  ));
  while (list.children.length > MAX_LOG) list.firstChild.remove();
  const panel = $("log-panel");
  if (panel.open) list.scrollTop = list.scrollHeight;
}
