/**
 * Runs: starting one (attached or detached), following its events, re-attaching, cancelling.
 */
import { api, authHeaders, enc, errorOf, openEvents } from "./api.js";
import { $, short } from "./dom.js";
import { clearFork, closeStateEdit, editedState, fork } from "./history.js";
import { hideInterrupt } from "./interrupts.js";
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
import { logEvent, onCustom, setContext } from "./panels.js";
import { applyPatch } from "./patch.js";
import {
  refreshRuns,
  refreshSessions,
  showOutcome,
  syncSession,
  titleSession,
} from "./sessions.js";
import { ASK_USER, modelOverride } from "./settings.js";
import { readEvents } from "./sse.js";
import { saved } from "./storage.js";
import {
  addCardArgs,
  addUser,
  bubble,
  endCardArgs,
  onReasoning,
  renderMessages,
  scrollDown,
  setCardResult,
  setCardStatus,
  syncEmpty,
  toolCard,
} from "./transcript.js";

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
      // Joined in the middle of a message (a live-only re-attach): the start arrives with the
      // record later.
      if (!known && obs.joinedLive) b.el.classList.add("partial");
      b.el.classList.add("streaming");
      b.textEl.textContent += ev.delta;
      scrollDown(false);
      break;
    }
    case "text_message_end":
      bubble(ev.message_id).el.classList.remove("streaming");
      break;
    case "reasoning_message_start":
    case "reasoning_message_content":
    case "reasoning_message_end":
      onReasoning(ev);
      break;
    case "tool_call_start":
      setCardStatus(
        toolCard(ev.tool_call_id, ev.tool_name, ev.parent_message_id),
        "calling",
        "calling",
      );
      scrollDown(false);
      break;
    case "tool_call_args":
      addCardArgs(ev.tool_call_id, ev.delta);
      break;
    case "tool_call_end":
      endCardArgs(ev.tool_call_id);
      break;
    case "tool_call_result":
      setCardResult(
        ui.cards.get(ev.tool_call_id) || toolCard(ev.tool_call_id, "tool", null),
        ev.content,
        ev.is_error,
      );
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
  if (obs.runId && obs.session) {
    saved.set("active", { session_id: obs.session, run_id: obs.runId, mode: obs.mode });
  }
}

function showFollowing(obs) {
  const how = obs.mode === "attached"
    ? "attached"
    : obs.mode === "detached"
    ? "detached"
    : "re-attached";
  setStatus("running " + short(obs.runId) + " \u00b7 " + how, "busy");
}

function finish(ev, obs) {
  for (const b of ui.bubbles.values()) b.el.classList.remove("streaming");
  setStatus("run " + short(ev.run_id) + " " + ev.status, statusKind(ev.status));
  $("step").textContent = "";
  if (ev.result && typeof ev.result === "object" && "context" in ev.result) {
    setContext(ev.result.context, null, true);
  }
  saved.remove("active");
  showOutcome(ev, true);
  if (obs.onFinish) obs.onFinish();
}

/** Stops following the current run (its stream is dropped). */
export function stopObserving() {
  const obs = ui.observing;
  if (!obs) return;
  obs.stopped = true;
  obs.ctl.abort();
  ui.observing = null;
  syncControls();
}

/** How often a broken stream of a running run is resumed from its cursor before giving up. */
const RESUMES = 3;

/**
 * Reads a run's event stream to its end, resuming it from its cursor when it breaks while the run
 * goes on, then reconciles the page with the stored records.
 */
async function consume(res, obs) {
  for (let resumes = 0;; resumes++) {
    let broken = null;
    try {
      for await (const { id, event } of readEvents(res)) {
        if (obs.stopped) break;
        // The stream's cursor: where a resume picks it up.
        if (id !== null) obs.lastEventId = id;
        onEvent(event, obs);
      }
    } catch (err) {
      broken = err;
    }
    if (obs.stopped || obs.finished || obs.lastEventId === null || resumes >= RESUMES) {
      if (broken && !obs.stopped) {
        showError(new Error("The event stream broke: " + broken.message));
      }
      break;
    }
    // Broken off before run_finished: pick it up after the last event received.
    try {
      res = await openEvents(obs.runId, obs.ctl.signal, obs.lastEventId);
    } catch {
      break;
    }
    if (!res.ok || res.status === 204) break;
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
        showBanner(
          "Lost the live stream of run " + short(run.run_id) +
            "; it is still running (Attach to follow it).",
          "info",
        );
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

function runBody(text, resume) {
  const body = { messages: [{ role: "user", content: [{ type: "text", value: text }] }] };
  if (ui.session) body.session_id = ui.session;
  if (ui.session && fork.checkpointId) body.checkpoint_id = fork.checkpointId;
  const context = editedState();
  if (context) body.context = context;
  if ($("client-tool").checked) body.tools = [ASK_USER];
  const override = modelOverride();
  if (override) body.model = { override };
  if (resume) body.resume_payload = resume;
  // Reloading the page must not cancel the answer: the reloaded page picks it up again (Cancel
  // cancels it).
  body.on_disconnect = "continue";
  return body;
}

/** Starts a run with a user message (and answers to an interrupt), then follows its events. */
export async function send(text, resume) {
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
    lastEventId: null,
    joinedLive: false,
    text,
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
      res = await openEvents(started.run_id, obs.ctl.signal);
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
  titleSession(obs.session, obs.text);
  clearFork();
  closeStateEdit();
  remember(obs);
  showFollowing(obs);
  $("message").value = "";
  hideInterrupt();
  syncControls();
  refreshRuns();
}

/** Follows a running run again (after a reload, or from the runs list). */
export async function attach(runId) {
  if (ui.observing) return;
  const obs = {
    runId,
    session: ui.session,
    mode: "reattached",
    ctl: new AbortController(),
    finished: false,
    stopped: false,
    lastEventId: null,
    joinedLive: false,
  };
  ui.observing = obs;
  remember(obs);
  showFollowing(obs);
  syncControls();
  try {
    // From the run's first event: the answer is drawn whole, once (its start snapshot replaces
    // what the page showed). Where the run's events are not kept, its live events from now on.
    let res = await openEvents(runId, obs.ctl.signal, "0");
    if (res.status === 410) {
      await res.body?.cancel();
      obs.joinedLive = true;
      res = await openEvents(runId, obs.ctl.signal);
    }
    if (res.status === 409 || res.status === 204) {
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

/** Asks the API to cancel a run. */
export async function cancelRun(runId) {
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
