/**
 * The playground's entry module: wires the controls and restores the page (session, settings,
 * a run still going) on load. It speaks only the public native API under `/v1`; docs/playground.md
 * describes what it does.
 */
import { loadAgent } from "./agent.js";
import { clearFork, toggleStateEdit } from "./history.js";
import { $ } from "./dom.js";
import { hideInterrupt, submitAnswers } from "./interrupts.js";
import { clearBanner, sessionFromHash, setHash, showSessionLabel, ui } from "./page.js";
import { resetRunPanels } from "./panels.js";
import { cancelRun, send, stopObserving } from "./runs.js";
import {
  loadSession,
  newSession,
  refreshRuns,
  refreshSessions,
  renderRuns,
  renderSessions,
} from "./sessions.js";
import { MODEL_FIELDS, restoreSettings, saveSettings } from "./settings.js";
import { connection, saved } from "./storage.js";
import { resetTranscript, syncEmpty } from "./transcript.js";

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
  $("cancel").addEventListener("click", () => {
    if (ui.observing && ui.observing.runId) cancelRun(ui.observing.runId);
  });
  $("new-session").addEventListener("click", newSession);
  $("session-search").addEventListener("input", renderSessions);
  $("fork-clear").addEventListener("click", clearFork);
  $("state-edit-toggle").addEventListener("click", toggleStateEdit);
  $("refresh-runs").addEventListener("click", () => {
    refreshSessions();
    refreshRuns();
  });
  $("banner-close").addEventListener("click", clearBanner);
  $("run-dialog-close").addEventListener("click", () => $("run-dialog").close());
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
  await loadAgent();
}

async function boot() {
  wire();
  restoreSettings();
  $("api-key").value = connection.key();
  renderRuns();
  syncEmpty();
  await Promise.all([refreshSessions(), loadAgent()]);
  const active = saved.get("active", null);
  const session = sessionFromHash() || (active && active.session_id) || saved.get("session", null);
  if (session) await loadSession(session);
  document.body.dataset.ready = "true";
}

boot();
