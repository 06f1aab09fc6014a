/**
 * The sessions and runs lists, and opening a session with everything it holds.
 */
import { api, ApiError, enc, listAll } from "./api.js";
import { $, clock, h } from "./dom.js";
import { clearFork, refreshHistory } from "./history.js";
import { hideInterrupt, showInterrupt } from "./interrupts.js";
import {
  clearBanner,
  setHash,
  setStatus,
  showBanner,
  showError,
  showSessionLabel,
  statusKind,
  syncControls,
  ui,
} from "./page.js";
import { resetRunPanels, setContext } from "./panels.js";
import { runView, usageLine } from "./run_view.js";
import { attach, cancelRun, stopObserving } from "./runs.js";
import { saved } from "./storage.js";
import { markPending, renderMessages, resetTranscript, syncEmpty } from "./transcript.js";

/** Reloads the sessions list. */
export async function refreshSessions() {
  try {
    ui.sessions = (await listAll("/v1/sessions")).reverse();
  } catch (err) {
    showError(err);
  }
  renderSessions();
}

/**
 * A session's title: its metadata's `title`, or the first message this page sent in it
 * (remembered in this browser).
 */
function titleOf(s) {
  const meta = s.metadata && typeof s.metadata.title === "string" ? s.metadata.title : "";
  return meta || saved.get("titles", {})[s.session_id] || "";
}

/** Remembers `text` as the title of session `id`, unless it has one. */
export function titleSession(id, text) {
  if (!id || !text) return;
  const titles = saved.get("titles", {});
  if (titles[id]) return;
  titles[id] = text.length > 80 ? text.slice(0, 79) + "\u2026" : text;
  saved.set("titles", titles);
  renderSessions();
}

/** Deletes a session (its messages, runs and checkpoints) and forgets it. */
async function deleteSession(id) {
  try {
    await api("DELETE", "/v1/sessions/" + enc(id));
  } catch (err) {
    showError(err);
    return;
  }
  const titles = saved.get("titles", {});
  delete titles[id];
  saved.set("titles", titles);
  if (ui.session === id) {
    stopObserving();
    ui.session = null;
    ui.runs = [];
    setHash(null);
    saved.remove("session");
    showSessionLabel();
    resetTranscript();
    syncEmpty();
    resetRunPanels();
    renderRuns();
    clearFork();
    refreshHistory();
  }
  await refreshSessions();
}

export function renderSessions() {
  const list = $("sessions");
  list.replaceChildren();
  const query = $("session-search").value.trim().toLowerCase();
  const shown = ui.sessions.filter((s) =>
    !query || s.session_id.toLowerCase().includes(query) ||
    titleOf(s).toLowerCase().includes(query)
  );
  if (shown.length === 0) {
    list.append(h("li", {
      class: "empty muted",
      text: ui.sessions.length === 0 ? "No sessions yet." : "No session matches.",
    }));
  }
  for (const s of shown) {
    const title = titleOf(s);
    list.append(h(
      "li",
      { class: "session-row" },
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
        h("span", { class: "title", text: title || "untitled" }),
        h("code", { text: s.session_id }),
        h("span", { class: "time", text: "updated " + clock(s.updated_at) }),
      ),
      h("button", {
        type: "button",
        class: "session-delete icon small ghost",
        title: "Delete this session",
        "aria-label": "Delete session " + (title || s.session_id),
        dataset: { sessionId: s.session_id },
        onclick: () => deleteSession(s.session_id),
      }, "\u00d7"),
    ));
  }
  syncControls();
}

/** Creates a session and opens it. */
export async function newSession() {
  try {
    const session = await api("POST", "/v1/sessions", {});
    await refreshSessions();
    await loadSession(session.session_id);
    $("message").focus();
  } catch (err) {
    showError(err);
  }
}

/** Reloads the runs of the current session. */
export async function refreshRuns() {
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

/** Draws the runs list, with Attach and Cancel on running runs. */
export function renderRuns() {
  const list = $("runs");
  list.replaceChildren();
  refreshSessionUsage();
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
      {
        class: "run" + (mine ? " current" : ""),
        dataset: { runId: run.run_id, status: run.status },
      },
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
      run.error
        ? h("div", { class: "run-error", text: run.error.message || run.error.code })
        : null,
      running ? null : runView(run),
    ));
  }
}

/** Shows the session's usage and cost (GET /v1/sessions/{id} sums its runs'). */
export async function refreshSessionUsage() {
  const el = $("session-usage");
  const id = ui.session;
  if (!id) {
    el.textContent = "";
    return;
  }
  try {
    const session = await api("GET", "/v1/sessions/" + enc(id));
    if (id !== ui.session) return;
    const line = usageLine(session.usage, session.cost);
    el.textContent = line ? "Session: " + line : "";
  } catch {
    el.textContent = "";
  }
}

/** Opens a session: its conversation, runs, state, open interrupt, and its running run if any. */
export async function loadSession(id) {
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
  let checkpoint = null;
  try {
    [messages, runs] = await Promise.all([
      listAll("/v1/sessions/" + enc(id) + "/messages"),
      listAll("/v1/sessions/" + enc(id) + "/runs"),
    ]);
    // The session's state is its latest checkpoint: the one of its latest run that wrote one.
    const withState = runs.filter((r) => r.checkpoint_id).pop();
    if (withState) {
      checkpoint = await api(
        "GET",
        "/v1/sessions/" + enc(id) + "/checkpoints/" + enc(withState.checkpoint_id),
      );
    }
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
  setContext(checkpoint ? checkpoint.state.context : null, null, false);
  clearFork();
  refreshHistory();
  const active = saved.get("active", null);
  const running =
    runs.find((r) => r.status === "running" && active && r.run_id === active.run_id) ||
    runs.find((r) => r.status === "running");
  const latest = runs[runs.length - 1];
  renderRuns();
  if (running) {
    attach(running.run_id);
  } else {
    setStatus(
      latest ? "last run " + latest.status : "idle",
      latest ? statusKind(latest.status) : "idle",
    );
    if (active && active.session_id === id) saved.remove("active");
    if (latest) showOutcome(latest, false);
  }
}

/** Reloads the conversation, runs and state of the current session from the API. */
export async function syncSession() {
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
    refreshHistory();
  } catch (err) {
    showError(err);
  }
}

/** Shows what a finished run left for the person: an interrupt to answer or an error. */
export function showOutcome(run, live) {
  const payload = run.interrupt_payload;
  if (run.status === "interrupted" && payload && payload.reason === "tool_calls") {
    showInterrupt(payload.pending || []);
  } else if (run.status === "interrupted" && payload && payload.reason === "max_steps") {
    if (live) {
      showBanner(
        "The run stopped after " + payload.max_steps + " model steps; send a message to go on.",
        "info",
      );
    }
  } else if (run.status === "failed" && live) {
    showBanner("The run failed: " + ((run.error && run.error.message) || "unknown error"), "error");
  } else if (run.status === "interrupted" && run.error && live) {
    showBanner("The run was interrupted: " + run.error.message, "info");
  }
}
