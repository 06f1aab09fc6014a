/**
 * The playground's behaviour: a vanilla JavaScript module (no build step, no dependencies) that
 * speaks only the public native API under `/v1`. `POST /v1/runs` streams Server-Sent Events on a
 * POST, which `EventSource` cannot send, so events are read from `fetch` with a stream reader.
 *
 * The source is kept free of backquotes and dollar-brace pairs so it can live in a raw template
 * literal unchanged; docs/playground.md describes what it does.
 *
 * @module
 */

/** The module served at `/playground/app.js`. */
export const APP_JS = String
  .raw`// agentd playground. Talks to the native API (/v1) of the server that serves it.
"use strict";

/** The client tool the playground can offer; a call to it interrupts the run for an answer. */
const ASK_USER = {
  name: "ask_user",
  description: "Ask the person using the playground a question and wait for the answer.",
  parameters: {
    type: "object",
    properties: { question: { type: "string", description: "The question to ask." } },
    required: ["question"],
  },
};
const KEY = "agentd.playground.";
const MAX_LOG = 300;
const MAX_CUSTOMS = 30;

const $ = (id) => document.getElementById(id);

/** Creates an element; props: class, text, dataset, on<event>, attributes. */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

const saved = {
  get(name, fallback) {
    try {
      const raw = localStorage.getItem(KEY + name);
      return raw === null ? fallback : JSON.parse(raw);
    } catch {
      return fallback;
    }
  },
  set(name, value) {
    try {
      localStorage.setItem(KEY + name, JSON.stringify(value));
    } catch {
      // Storage may be unavailable (private mode); the page still works without it.
    }
  },
  remove(name) {
    try {
      localStorage.removeItem(KEY + name);
    } catch {
      // As above.
    }
  },
};

/** The API key lives in this tab only (sessionStorage); the tenant is remembered. */
const connection = {
  key() {
    try {
      return sessionStorage.getItem(KEY + "api_key") || "";
    } catch {
      return "";
    }
  },
  setKey(value) {
    try {
      if (value) sessionStorage.setItem(KEY + "api_key", value);
      else sessionStorage.removeItem(KEY + "api_key");
    } catch {
      // Without storage the key is only in the field.
    }
  },
};

/** Headers of every API request: the API key and the tenant, when set. */
function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  const key = $("api-key").value.trim();
  const tenant = $("tenant").value.trim();
  if (key) headers["x-api-key"] = key;
  if (tenant) headers["x-tenant-id"] = tenant;
  return headers;
}

// ---------------------------------------------------------------------------------------------
// The API

class ApiError extends Error {
  constructor(status, body) {
    super(describeError(status, body) + (status === 401 ? " Enter an API key under Connection." : ""));
    this.status = status;
    this.body = body;
  }
}

function describeError(status, body) {
  if (body && Array.isArray(body.fields)) {
    const parts = body.fields.map((f) =>
      f.field + ": " + (f.errors || []).map((e) => e.message || e.code).join(", ")
    );
    return "Invalid request: " + parts.join("; ") + " (" + body.code + ")";
  }
  if (body && body.message) return body.message + (body.code ? " (" + body.code + ")" : "");
  return "The server answered HTTP " + status;
}

async function errorOf(res) {
  const text = await res.text().catch(() => "");
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { message: text };
  }
  return new ApiError(res.status, body);
}

async function api(method, path, body) {
  const init = { method, headers: authHeaders({ accept: "application/json" }) };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return null;
  return res.json();
}

/** Every item of a list endpoint (oldest first), following next_page. */
async function listAll(path) {
  const items = [];
  let page = null;
  for (let i = 0; i < 50; i++) {
    const query = "?per_page=1000" + (page ? "&page=" + encodeURIComponent(page) : "");
    const data = await api("GET", path + query);
    items.push(...data.items);
    page = data.next_page;
    if (!page) break;
  }
  return items;
}

const enc = encodeURIComponent;

/** Yields the JSON events of a Server-Sent Events response body (comments are skipped). */
async function* readEvents(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
          .join("\n");
        if (!data) continue;
        let event;
        try {
          event = JSON.parse(data);
        } catch {
          continue;
        }
        yield event;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// Page state

const ui = {
  session: null,
  sessions: [],
  runs: [],
  /** The run this tab follows: { runId, session, mode, ctl, finished, status }. */
  observing: null,
  context: null,
  bubbles: new Map(),
  cards: new Map(),
  pending: [],
  loadToken: 0,
};

function short(id) {
  return id && id.length > 12 ? id.slice(0, 8) : id || "";
}

function clock(iso) {
  const d = iso ? new Date(iso) : new Date();
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

function pretty(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
}

function compact(value) {
  if (typeof value === "string") return value;
  const text = JSON.stringify(value);
  return text === undefined ? "" : text;
}

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.dataset.kind = kind || "idle";
}

function showBanner(text, kind) {
  $("banner-text").textContent = text;
  $("banner").dataset.kind = kind || "error";
  $("banner").hidden = false;
}

function clearBanner() {
  $("banner").hidden = true;
}

function showError(err) {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    $("connection-panel").open = true;
  }
  showBanner(err instanceof Error ? err.message : String(err), "error");
}

/** Enables and disables controls from the current run. */
function syncControls() {
  const obs = ui.observing;
  const busy = obs !== null;
  $("send").disabled = busy;
  $("resume").disabled = busy;
  $("cancel").disabled = !(obs && obs.runId && !obs.finished);
  $("new-session").disabled = busy && obs.mode === "attached";
  for (const button of document.querySelectorAll(".session-item")) {
    // Leaving the page section of an attached run would drop its stream, which cancels it.
    button.disabled = busy && obs.mode === "attached";
  }
  renderRuns();
}

function showSessionLabel() {
  $("session-label").textContent = ui.session || "none";
}

function setHash(session) {
  const url = new URL(location.href);
  url.hash = session ? "session=" + enc(session) : "";
  history.replaceState(null, "", url);
}

function sessionFromHash() {
  const match = /(?:^#|&)session=([^&]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

// ---------------------------------------------------------------------------------------------
// Sessions and runs

async function refreshSessions() {
  try {
    ui.sessions = (await listAll("/v1/sessions")).reverse();
  } catch (err) {
    showError(err);
  }
  renderSessions();
}

function renderSessions() {
  const list = $("sessions");
  list.replaceChildren();
  if (ui.sessions.length === 0) list.append(h("li", { class: "empty muted", text: "No sessions yet." }));
  for (const s of ui.sessions) {
    list.append(h(
      "li",
      {},
      h(
        "button",
        {
          type: "button",
          class: "session-item",
          "aria-current": s.session_id === ui.session ? "true" : "false",
          title: s.session_id,
          dataset: { sessionId: s.session_id },
          onclick: () => loadSession(s.session_id),
        },
        h("code", { text: s.session_id }),
        h("span", { class: "time", text: "updated " + clock(s.updated_at) }),
      ),
    ));
  }
  syncControls();
}

async function newSession() {
  try {
    const session = await api("POST", "/v1/sessions", {});
    await refreshSessions();
    await loadSession(session.session_id);
    $("message").focus();
  } catch (err) {
    showError(err);
  }
}

async function refreshRuns() {
  if (!ui.session) return;
  const session = ui.session;
  try {
    const runs = await listAll("/v1/sessions/" + enc(session) + "/runs");
    if (session === ui.session) ui.runs = runs;
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) showError(err);
  }
  renderRuns();
}

function renderRuns() {
  const list = $("runs");
  list.replaceChildren();
  if (!ui.session) {
    list.append(h("li", { class: "empty muted", text: "Pick a session." }));
    return;
  }
  if (ui.runs.length === 0) list.append(h("li", { class: "empty muted", text: "No runs yet." }));
  const followed = ui.observing && ui.observing.runId;
  for (const run of [...ui.runs].reverse()) {
    const mine = run.run_id === followed;
    const running = run.status === "running";
    list.append(h(
      "li",
      { class: "run" + (mine ? " current" : ""), dataset: { runId: run.run_id, status: run.status } },
      h(
        "div",
        { class: "run-line" },
        h("span", { class: "badge " + run.status, text: run.status }),
        h("span", { class: "time", text: clock(run.created_at) }),
      ),
      h("code", { class: "run-id", title: run.run_id, text: run.run_id }),
      running
        ? h(
          "div",
          { class: "run-actions" },
          mine ? h("span", { class: "muted", text: "following" }) : h("button", {
            type: "button",
            class: "small",
            text: "Attach",
            disabled: ui.observing !== null,
            onclick: () => attach(run.run_id),
          }),
          h("button", {
            type: "button",
            class: "small danger",
            text: "Cancel",
            onclick: () => cancelRun(run.run_id),
          }),
        )
        : null,
      run.error ? h("div", { class: "run-error", text: run.error.message || run.error.code }) : null,
    ));
  }
}

/** Opens a session: its conversation, runs, state, open interrupt, and its running run if any. */
async function loadSession(id) {
  if (ui.observing && ui.observing.mode === "attached") return;
  const token = ++ui.loadToken;
  if (ui.observing) stopObserving();
  clearBanner();
  ui.session = id;
  ui.runs = [];
  setHash(id);
  saved.set("session", id);
  showSessionLabel();
  renderSessions();
  resetRunPanels();
  hideInterrupt();
  let messages;
  let runs;
  let checkpoints;
  try {
    [messages, runs, checkpoints] = await Promise.all([
      listAll("/v1/sessions/" + enc(id) + "/messages"),
      listAll("/v1/sessions/" + enc(id) + "/runs"),
      listAll("/v1/sessions/" + enc(id) + "/checkpoints"),
    ]);
  } catch (err) {
    if (token !== ui.loadToken) return;
    if (err instanceof ApiError && err.status === 404) {
      showBanner("Session " + id + " does not exist (any more). Pick another one.", "info");
      ui.session = null;
      setHash(null);
      saved.remove("session");
      showSessionLabel();
      renderMessages([]);
      renderSessions();
      renderRuns();
      return;
    }
    showError(err);
    return;
  }
  if (token !== ui.loadToken) return;
  renderMessages(messages);
  ui.runs = runs;
  const last = checkpoints[checkpoints.length - 1];
  setContext(last ? last.state.context : null, null, false);
  const active = saved.get("active", null);
  const running = runs.find((r) => r.status === "running" && active && r.run_id === active.run_id) ||
    runs.find((r) => r.status === "running");
  const latest = runs[runs.length - 1];
  renderRuns();
  if (running) {
    attach(running.run_id);
  } else {
    setStatus(latest ? "last run " + latest.status : "idle", latest ? statusKind(latest.status) : "idle");
    if (active && active.session_id === id) saved.remove("active");
    if (latest) showOutcome(latest, false);
  }
}

/** Reloads the conversation, runs and state of the current session from the API. */
async function syncSession() {
  const id = ui.session;
  if (!id) return;
  try {
    const [messages, runs] = await Promise.all([
      listAll("/v1/sessions/" + enc(id) + "/messages"),
      listAll("/v1/sessions/" + enc(id) + "/runs"),
    ]);
    if (id !== ui.session || ui.observing) return;
    renderMessages(messages);
    ui.runs = runs;
    renderRuns();
    markPending();
  } catch (err) {
    showError(err);
  }
}

function statusKind(status) {
  if (status === "completed") return "ok";
  if (status === "running") return "busy";
  if (status === "interrupted") return "warn";
  if (status === "failed" || status === "cancelled") return "error";
  return "idle";
}

/** Shows what a finished run left for the person: an interrupt to answer or an error. */
function showOutcome(run, live) {
  const payload = run.interrupt_payload;
  if (run.status === "interrupted" && payload && payload.reason === "tool_calls") {
    showInterrupt(payload.pending || []);
  } else if (run.status === "interrupted" && payload && payload.reason === "max_steps") {
    if (live) showBanner("The run stopped after " + payload.max_steps + " model steps; send a message to go on.", "info");
  } else if (run.status === "failed" && live) {
    showBanner("The run failed: " + ((run.error && run.error.message) || "unknown error"), "error");
  } else if (run.status === "interrupted" && run.error && live) {
    showBanner("The run was interrupted: " + run.error.message, "info");
  }
}

// ---------------------------------------------------------------------------------------------
// Conversation

function resetTranscript() {
  $("transcript").replaceChildren();
  ui.bubbles.clear();
  ui.cards.clear();
}

function syncEmpty() {
  $("empty").hidden = $("transcript").children.length > 0;
}

function scrollDown(force) {
  const el = $("scroller");
  const near = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
  if (force || near) el.scrollTop = el.scrollHeight;
}

function append(el) {
  $("transcript").append(el);
  syncEmpty();
  scrollDown(true);
  return el;
}

function textOf(content) {
  return (content || []).filter((p) => p.type === "text").map((p) => p.value).join("");
}

function dataOf(content) {
  const part = (content || []).find((p) => p.type === "data");
  return part ? part.value : undefined;
}

function addUser(text, id) {
  return append(h(
    "div",
    { class: "msg user", dataset: { messageId: id || "" } },
    h("div", { class: "role", text: "you" }),
    h("div", { class: "bubble" }, h("div", { class: "text", text })),
  ));
}

function bubble(id) {
  let b = ui.bubbles.get(id);
  if (b) return b;
  const textEl = h("div", { class: "text" });
  const toolsEl = h("div", { class: "tools" });
  const el = h(
    "div",
    { class: "msg assistant", dataset: { messageId: id } },
    h("div", { class: "role", text: "agent" }),
    h("div", { class: "bubble" }, textEl, toolsEl),
  );
  b = { el, textEl, toolsEl };
  ui.bubbles.set(id, b);
  append(el);
  return b;
}

function toolCard(id, name, parentId) {
  let card = ui.cards.get(id);
  if (card) return card;
  const statusEl = h("span", { class: "badge calling", text: "calling" });
  const argsEl = h("pre", { class: "json args" });
  const resultEl = h("pre", { class: "json result" });
  const resultRow = h("div", { class: "kv" }, h("span", { class: "k", text: "result" }), resultEl);
  resultRow.hidden = true;
  const el = h(
    "div",
    { class: "toolcall", dataset: { callId: id, tool: name, status: "calling" } },
    h(
      "div",
      { class: "toolcall-head" },
      h("span", { class: "tool-name", text: name }),
      h("code", { class: "call-id", title: id, text: id }),
      statusEl,
    ),
    h("div", { class: "kv" }, h("span", { class: "k", text: "arguments" }), argsEl),
    resultRow,
  );
  bubble(parentId || "call-" + id).toolsEl.append(el);
  card = { el, statusEl, argsEl, resultEl, resultRow, argsText: "" };
  ui.cards.set(id, card);
  return card;
}

function setCardStatus(card, status, label) {
  card.el.dataset.status = status;
  card.statusEl.className = "badge " + status;
  card.statusEl.textContent = label || status;
}

function isErrorResult(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && "error" in value;
}

function setCardResult(card, content, isError) {
  card.resultRow.hidden = false;
  card.resultEl.textContent = pretty(content);
  const rejected = isError && content && content.error === "the user rejected this tool call";
  setCardStatus(card, isError ? "error" : "done", rejected ? "rejected" : isError ? "error" : "done");
}

/** Rebuilds the conversation from message records (history, or a messages_snapshot). */
function renderMessages(messages) {
  resetTranscript();
  for (const m of messages) {
    if (m.role === "user") {
      const text = textOf(m.content);
      addUser(text || pretty(dataOf(m.content)), m.message_id);
    } else if (m.role === "assistant") {
      const b = bubble(m.message_id);
      b.textEl.textContent = textOf(m.content);
      for (const call of m.tool_calls || []) {
        const card = toolCard(call.id, call.name, m.message_id);
        card.argsEl.textContent = pretty(call.arguments);
        setCardStatus(card, "called", "no result");
      }
    } else if (m.role === "tool") {
      const data = dataOf(m.content);
      const value = data === undefined ? textOf(m.content) : data;
      const card = ui.cards.get(m.tool_call_id) || toolCard(m.tool_call_id, "tool", null);
      setCardResult(card, value, isErrorResult(value));
    } else {
      append(h("div", { class: "msg system" }, h("div", { class: "note", text: textOf(m.content) })));
    }
  }
  markPending();
  syncEmpty();
  scrollDown(true);
}

function markPending() {
  for (const p of ui.pending) {
    const card = ui.cards.get(p.tool_call_id);
    if (card && card.el.dataset.status !== "done" && card.el.dataset.status !== "error") {
      setCardStatus(card, "waiting", p.kind === "approval" ? "needs approval" : "waiting for you");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// State, progress and tool events

function resetRunPanels() {
  $("progress").value = 0;
  $("progress-panel").dataset.active = "false";
  $("progress-label").textContent = "No progress reported yet.";
  $("customs").replaceChildren(h("li", { class: "muted", text: "None yet." }));
  $("state-changes").replaceChildren();
  $("events").replaceChildren();
  $("step").textContent = "";
  setContext(null, null, false);
}

function setContext(context, delta, flash) {
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
      " " + op.path + ("value" in op ? " = " + JSON.stringify(op.value) : "") + ("from" in op ? " from " + op.from : ""),
    );
    $("state-changes").prepend(li);
  }
  while ($("state-changes").children.length > 6) $("state-changes").lastChild.remove();
}

function pointer(path) {
  if (path === "") return [];
  return path.split("/").slice(1).map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function getAt(doc, tokens) {
  let cur = doc;
  for (const t of tokens) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = Array.isArray(cur) ? cur[t === "-" ? cur.length : Number(t)] : cur[t];
  }
  return cur;
}

function putAt(doc, tokens, value, insert) {
  if (tokens.length === 0) return value;
  const parent = getAt(doc, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const i = key === "-" ? parent.length : Number(key);
    if (insert) parent.splice(i, 0, value);
    else parent[i] = value;
  } else if (parent !== null && typeof parent === "object") {
    parent[key] = value;
  }
  return doc;
}

function removeAt(doc, tokens) {
  if (tokens.length === 0) return null;
  const parent = getAt(doc, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (parent !== null && typeof parent === "object") delete parent[key];
  return doc;
}

const clone = (v) => v === undefined ? undefined : JSON.parse(JSON.stringify(v));

/** Applies RFC 6902 operations to a copy of the context (the server already checked them). */
function applyPatch(doc, ops) {
  let out = clone(doc === null || doc === undefined ? {} : doc);
  for (const op of ops) {
    const path = pointer(op.path);
    if (op.op === "add") out = putAt(out, path, clone(op.value), true);
    else if (op.op === "replace") out = putAt(out, path, clone(op.value), false);
    else if (op.op === "remove") out = removeAt(out, path);
    else if (op.op === "copy") out = putAt(out, path, clone(getAt(out, pointer(op.from))), true);
    else if (op.op === "move") {
      const value = getAt(out, pointer(op.from));
      out = putAt(removeAt(out, pointer(op.from)), path, value, true);
    }
  }
  return out;
}

/** A progress value in [0, 1] from a custom event, or null when it reports none. */
function progressOf(name, value) {
  let v = null;
  if (typeof value === "number" && /progress/i.test(name)) v = value;
  else if (value && typeof value === "object") {
    if (typeof value.progress === "number") v = value.progress;
    else if (typeof value.value === "number" && /progress/i.test(name)) v = value.value;
  }
  if (v === null || !Number.isFinite(v)) return null;
  if (v > 1 && v <= 100) v = v / 100;
  return Math.min(Math.max(v, 0), 1);
}

function onCustom(name, value) {
  const v = progressOf(name, value);
  if (v !== null) {
    $("progress").value = v;
    $("progress-panel").dataset.active = v >= 1 ? "done" : "true";
    const task = value && typeof value === "object" && typeof value.task === "string" ? value.task + ": " : "";
    $("progress-label").textContent = task + Math.round(v * 100) + "%";
  }
  const list = $("customs");
  if (list.firstChild && list.firstChild.classList.contains("muted")) list.replaceChildren();
  list.prepend(h(
    "li",
    { title: compact(value) },
    h("code", { text: name }),
    h("code", { class: "muted", text: compact(value) }),
  ));
  while (list.children.length > MAX_CUSTOMS) list.lastChild.remove();
}

function logEvent(ev) {
  const list = $("events");
  let detail = "";
  if (ev.kind === "text_message_content" || ev.kind === "tool_call_args") detail = compact(ev.delta);
  else if (ev.kind === "tool_call_start") detail = ev.tool_name;
  else if (ev.kind === "custom") detail = ev.name + " " + compact(ev.value);
  else if (ev.kind === "run_finished") detail = ev.status;
  else if (ev.kind === "step_started" || ev.kind === "step_finished") detail = ev.step + " " + ev.step_name;
  else if (ev.kind === "state_delta") detail = compact(ev.delta);
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

// ---------------------------------------------------------------------------------------------
// Runs: events, start, attach, cancel

function onEvent(ev, obs) {
  logEvent(ev);
  switch (ev.kind) {
    case "run_started":
      obs.runId = ev.run_id;
      adoptSession(ev.session_id);
      remember(obs);
      showFollowing(obs);
      refreshRuns();
      break;
    case "messages_snapshot":
      renderMessages(ev.messages);
      break;
    case "step_started":
      $("step").textContent = "step " + ev.step + " \u00b7 " + ev.step_name;
      if (ev.step_name === "tools") {
        for (const card of ui.cards.values()) {
          if (card.el.dataset.status === "called") setCardStatus(card, "running", "running");
        }
      }
      break;
    case "text_message_start":
      bubble(ev.message_id).el.classList.add("streaming");
      scrollDown(false);
      break;
    case "text_message_content": {
      const known = ui.bubbles.has(ev.message_id);
      const b = bubble(ev.message_id);
      // Joined in the middle of a message (re-attach): the start arrives with the record later.
      if (!known && obs.mode === "reattached") b.el.classList.add("partial");
      b.el.classList.add("streaming");
      b.textEl.textContent += ev.delta;
      scrollDown(false);
      break;
    }
    case "text_message_end":
      bubble(ev.message_id).el.classList.remove("streaming");
      break;
    case "tool_call_start":
      setCardStatus(toolCard(ev.tool_call_id, ev.tool_name, ev.parent_message_id), "calling", "calling");
      scrollDown(false);
      break;
    case "tool_call_args": {
      const card = ui.cards.get(ev.tool_call_id);
      if (card) {
        card.argsText += ev.delta;
        card.argsEl.textContent = card.argsText;
      }
      break;
    }
    case "tool_call_end": {
      const card = ui.cards.get(ev.tool_call_id);
      if (card) {
        try {
          card.argsEl.textContent = pretty(JSON.parse(card.argsText));
        } catch {
          // Keep the raw text.
        }
        setCardStatus(card, "called", "called");
      }
      break;
    }
    case "tool_call_result":
      setCardResult(ui.cards.get(ev.tool_call_id) || toolCard(ev.tool_call_id, "tool", null), ev.content, ev.is_error);
      scrollDown(false);
      break;
    case "state_snapshot":
      setContext(ev.context, null, true);
      break;
    case "state_delta":
      setContext(applyPatch(ui.context, ev.delta), ev.delta, true);
      break;
    case "custom":
      onCustom(ev.name, ev.value);
      break;
    case "run_finished":
      obs.finished = true;
      obs.status = ev.status;
      finish(ev, obs);
      break;
  }
}

function adoptSession(id) {
  if (!id || id === ui.session) return;
  ui.session = id;
  setHash(id);
  saved.set("session", id);
  showSessionLabel();
  refreshSessions();
}

function remember(obs) {
  if (obs.runId && obs.session) saved.set("active", { session_id: obs.session, run_id: obs.runId, mode: obs.mode });
}

function showFollowing(obs) {
  const how = obs.mode === "attached" ? "attached" : obs.mode === "detached" ? "detached" : "re-attached";
  setStatus("running " + short(obs.runId) + " \u00b7 " + how, "busy");
}

function finish(ev, obs) {
  for (const b of ui.bubbles.values()) b.el.classList.remove("streaming");
  setStatus("run " + short(ev.run_id) + " " + ev.status, statusKind(ev.status));
  $("step").textContent = "";
  if (ev.result && typeof ev.result === "object" && "context" in ev.result) setContext(ev.result.context, null, true);
  saved.remove("active");
  showOutcome(ev, true);
  if (obs.onFinish) obs.onFinish();
}

function stopObserving() {
  const obs = ui.observing;
  if (!obs) return;
  obs.stopped = true;
  obs.ctl.abort();
  ui.observing = null;
  syncControls();
}

/** Reads a run's event stream to its end, then reconciles the page with the stored records. */
async function consume(res, obs) {
  try {
    for await (const ev of readEvents(res)) {
      if (obs.stopped) break;
      onEvent(ev, obs);
    }
  } catch (err) {
    if (!obs.stopped) showError(new Error("The event stream broke: " + err.message));
  }
  if (obs.stopped) return;
  ui.observing = null;
  syncControls();
  if (!obs.finished) {
    // The stream ended without run_finished (server going away, transport lost): ask the API.
    try {
      const run = await api("GET", "/v1/runs/" + enc(obs.runId));
      setStatus("run " + short(run.run_id) + " " + run.status, statusKind(run.status));
      if (run.status === "running") {
        showBanner("Lost the live stream of run " + short(run.run_id) + "; it is still running (Attach to follow it).", "info");
      } else {
        saved.remove("active");
        showOutcome(run, true);
      }
    } catch (err) {
      showError(err);
    }
  }
  await syncSession();
}

function modelOverride() {
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

function runBody(text, resume) {
  const body = { messages: [{ role: "user", content: [{ type: "text", value: text }] }] };
  if (ui.session) body.session_id = ui.session;
  if ($("client-tool").checked) body.tools = [ASK_USER];
  const override = modelOverride();
  if (override) body.model = { override };
  if (resume) body.resume_payload = resume;
  return body;
}

/** Starts a run with a user message (and answers to an interrupt), then follows its events. */
async function send(text, resume) {
  if (ui.observing) return;
  let body;
  try {
    body = runBody(text, resume);
  } catch (err) {
    showError(err);
    return;
  }
  clearBanner();
  const detached = $("detached").checked;
  const obs = {
    runId: null,
    session: ui.session,
    mode: detached ? "detached" : "attached",
    ctl: new AbortController(),
    finished: false,
    stopped: false,
  };
  ui.observing = obs;
  syncControls();
  setStatus("starting\u2026", "busy");
  const echo = addUser(text);
  echo.classList.add("sending");
  try {
    let res;
    if (detached) {
      const started = await api("POST", "/v1/runs/start", body);
      accepted(obs, started.run_id, started.session_id);
      res = await fetch("/v1/runs/" + enc(started.run_id) + "/events", {
        headers: authHeaders({ accept: "text/event-stream" }),
        signal: obs.ctl.signal,
      });
      if (res.status === 409) {
        // It finished before we could attach: the records have everything.
        ui.observing = null;
        syncControls();
        saved.remove("active");
        await syncSession();
        const run = await api("GET", "/v1/runs/" + enc(started.run_id));
        setStatus("run " + short(run.run_id) + " " + run.status, statusKind(run.status));
        showOutcome(run, true);
        return;
      }
      if (!res.ok) throw await errorOf(res);
    } else {
      res = await fetch("/v1/runs", {
        method: "POST",
        headers: authHeaders({ "content-type": "application/json", accept: "text/event-stream" }),
        body: JSON.stringify(body),
        signal: obs.ctl.signal,
      });
      if (!res.ok) throw await errorOf(res);
      accepted(obs, res.headers.get("x-run-id"), res.headers.get("x-session-id"));
    }
    await consume(res, obs);
  } catch (err) {
    if (obs.stopped) return;
    if (!obs.runId) echo.remove();
    syncEmpty();
    ui.observing = null;
    syncControls();
    setStatus("idle", "idle");
    showError(err);
    if (obs.runId) await syncSession();
  }
}

function accepted(obs, runId, sessionId) {
  obs.runId = runId;
  obs.session = sessionId || obs.session;
  adoptSession(obs.session);
  remember(obs);
  showFollowing(obs);
  $("message").value = "";
  hideInterrupt();
  syncControls();
  refreshRuns();
}

/** Follows a running run again (after a reload, or from the runs list). */
async function attach(runId) {
  if (ui.observing) return;
  const obs = {
    runId,
    session: ui.session,
    mode: "reattached",
    ctl: new AbortController(),
    finished: false,
    stopped: false,
  };
  ui.observing = obs;
  remember(obs);
  showFollowing(obs);
  syncControls();
  try {
    const res = await fetch("/v1/runs/" + enc(runId) + "/events", {
      headers: authHeaders({ accept: "text/event-stream" }),
      signal: obs.ctl.signal,
    });
    if (res.status === 409) {
      ui.observing = null;
      syncControls();
      saved.remove("active");
      const run = await api("GET", "/v1/runs/" + enc(runId));
      setStatus("run " + short(runId) + " " + run.status, statusKind(run.status));
      await syncSession();
      showOutcome(run, false);
      return;
    }
    if (!res.ok) throw await errorOf(res);
    await consume(res, obs);
  } catch (err) {
    if (obs.stopped) return;
    ui.observing = null;
    syncControls();
    showError(err);
  }
}

async function cancelRun(runId) {
  try {
    await api("PUT", "/v1/runs/" + enc(runId) + "/cancel");
    if (ui.observing && ui.observing.runId === runId && !ui.observing.finished) {
      setStatus("cancelling " + short(runId) + "\u2026", "busy");
    } else {
      await refreshRuns();
    }
  } catch (err) {
    showError(err);
  }
}

// ---------------------------------------------------------------------------------------------
// Interrupts

function hideInterrupt() {
  ui.pending = [];
  $("interrupt").hidden = true;
  $("interrupt-items").replaceChildren();
}

function showInterrupt(pending) {
  ui.pending = pending;
  const box = $("interrupt-items");
  box.replaceChildren();
  for (const p of pending) box.append(p.kind === "approval" ? approvalItem(p) : clientItem(p));
  $("interrupt").hidden = pending.length === 0;
  markPending();
  syncControls();
  const first = box.querySelector("textarea, input");
  if (first) first.focus();
}

function clientItem(p) {
  const args = p.arguments || {};
  const question = typeof args.question === "string" ? args.question : null;
  return h(
    "div",
    { class: "pending", dataset: { callId: p.tool_call_id, kind: "client_tool", tool: p.tool_name } },
    h(
      "div",
      { class: "pending-head" },
      h("span", { class: "badge waiting", text: "client tool" }),
      h("strong", { text: p.tool_name }),
      h("code", { class: "muted", text: p.tool_call_id }),
    ),
    question ? h("p", { class: "question", text: question }) : h("pre", { class: "json", text: pretty(args) }),
    h(
      "label",
      { class: "field" },
      "Result (text, or JSON)",
      h("textarea", { rows: "2", class: "answer", "aria-label": "Result of " + p.tool_name }),
    ),
    h("label", { class: "check" }, h("input", { type: "checkbox", class: "is-error" }), "Report it as an error"),
  );
}

function approvalItem(p) {
  const name = "approval-" + p.tool_call_id;
  return h(
    "div",
    { class: "pending", dataset: { callId: p.tool_call_id, kind: "approval", tool: p.tool_name } },
    h(
      "div",
      { class: "pending-head" },
      h("span", { class: "badge waiting", text: "needs approval" }),
      h("strong", { text: p.tool_name }),
      h("code", { class: "muted", text: p.tool_call_id }),
    ),
    h("pre", { class: "json", text: pretty(p.arguments) }),
    h(
      "div",
      { class: "choices" },
      h("label", { class: "check" }, h("input", { type: "radio", name, value: "approve" }), "Approve"),
      h("label", { class: "check" }, h("input", { type: "radio", name, value: "reject" }), "Reject"),
      h("input", { type: "text", class: "reason", placeholder: "Reason (optional)", "aria-label": "Reason" }),
    ),
  );
}

function collectAnswers() {
  const resume = { tool_results: [], approvals: [] };
  const missing = [];
  for (const item of $("interrupt-items").children) {
    const id = item.dataset.callId;
    if (item.dataset.kind === "approval") {
      const choice = item.querySelector("input[type=radio]:checked");
      if (!choice) {
        missing.push(item.dataset.tool);
        continue;
      }
      const entry = { tool_call_id: id, approved: choice.value === "approve" };
      const reason = item.querySelector(".reason").value.trim();
      if (reason) entry.reason = reason;
      resume.approvals.push(entry);
    } else {
      const raw = item.querySelector(".answer").value.trim();
      if (!raw) {
        missing.push(item.dataset.tool);
        continue;
      }
      let result = raw;
      try {
        result = JSON.parse(raw);
      } catch {
        // Plain text is a fine result.
      }
      const entry = { tool_call_id: id, result };
      if (item.querySelector(".is-error").checked) entry.is_error = true;
      resume.tool_results.push(entry);
    }
  }
  return { resume, missing };
}

function submitAnswers() {
  const { resume, missing } = collectAnswers();
  if (missing.length > 0) {
    showBanner("Answer every call first: " + missing.join(", ") + ".", "info");
    return;
  }
  const text = $("resume-message").value.trim() || "Here are my answers.";
  send(text, resume);
}

// ---------------------------------------------------------------------------------------------
// Settings and wiring

const MODEL_FIELDS = [
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

function saveSettings() {
  const values = {};
  for (const id of MODEL_FIELDS) {
    const el = $(id);
    values[id] = el.type === "checkbox" ? el.checked : el.value;
  }
  saved.set("settings", values);
  describeModel();
}

function restoreSettings() {
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

function wire() {
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("message").value.trim();
    if (!text) {
      $("message").focus();
      return;
    }
    send(text, null);
  });
  $("message").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  for (const chip of document.querySelectorAll("[data-fill]")) {
    chip.addEventListener("click", () => {
      $("message").value = chip.dataset.fill;
      $("message").focus();
    });
  }
  $("cancel").addEventListener("click", () => {
    if (ui.observing && ui.observing.runId) cancelRun(ui.observing.runId);
  });
  $("new-session").addEventListener("click", newSession);
  $("refresh-runs").addEventListener("click", () => {
    refreshSessions();
    refreshRuns();
  });
  $("banner-close").addEventListener("click", clearBanner);
  $("resume").addEventListener("click", submitAnswers);
  $("interrupt-skip").addEventListener("click", () => {
    $("interrupt").hidden = true;
  });
  for (const id of MODEL_FIELDS) {
    $(id).addEventListener("input", saveSettings);
    $(id).addEventListener("change", saveSettings);
  }
  $("api-key").addEventListener("change", () => {
    connection.setKey($("api-key").value.trim());
    reconnect();
  });
  $("tenant").addEventListener("change", reconnect);
  addEventListener("hashchange", () => {
    const id = sessionFromHash();
    if (id && id !== ui.session) loadSession(id);
  });
}

/** Another key or tenant sees other sessions: start over from the sessions list. */
async function reconnect() {
  if (ui.observing && ui.observing.mode === "attached") return;
  if (ui.observing) stopObserving();
  clearBanner();
  ui.session = null;
  ui.runs = [];
  setHash(null);
  showSessionLabel();
  resetTranscript();
  syncEmpty();
  resetRunPanels();
  hideInterrupt();
  renderRuns();
  await refreshSessions();
}

async function boot() {
  wire();
  restoreSettings();
  $("api-key").value = connection.key();
  renderRuns();
  syncEmpty();
  await refreshSessions();
  const active = saved.get("active", null);
  const session = sessionFromHash() || (active && active.session_id) || saved.get("session", null);
  if (session) await loadSession(session);
  document.body.dataset.ready = "true";
}

boot();
`;
