/**
 * The page's shared state (which session, which run it follows) and its status line, banner and
 * controls.
 */
import { ApiError, enc } from "./api.js";
import { $ } from "./dom.js";
import { renderRuns } from "./sessions.js";

/** What the page shows and follows right now. */
export const ui = {
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

/** Sets the status line; `kind` colours it (idle, busy, ok, warn, error). */
export function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.dataset.kind = kind || "idle";
}

/** Shows a message above the conversation. */
export function showBanner(text, kind) {
  $("banner-text").textContent = text;
  $("banner").dataset.kind = kind || "error";
  $("banner").hidden = false;
}

/** Hides the banner. */
export function clearBanner() {
  $("banner").hidden = true;
}

/** Shows an error in the banner (and opens the connection settings for 401/403). */
export function showError(err) {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    $("connection-panel").open = true;
  }
  showBanner(err instanceof Error ? err.message : String(err), "error");
}

/** Enables and disables controls from the current run. */
export function syncControls() {
  const obs = ui.observing;
  const busy = obs !== null;
  $("send").disabled = busy;
  $("resume").disabled = busy;
  $("cancel").disabled = !(obs && obs.runId && !obs.finished);
  $("new-session").disabled = busy && obs.mode === "attached";
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (
    document.querySelectorAll(".session-item")
  );
  for (const button of buttons) {
    // Leaving the page section of an attached run would drop its stream, which cancels it.
    button.disabled = busy && obs.mode === "attached";
  }
  renderRuns();
}

/** Shows the current session's id in the top bar. */
export function showSessionLabel() {
  $("session-label").textContent = ui.session || "none";
}

/** Puts the current session in the URL fragment (a reload reopens it). */
export function setHash(session) {
  const url = new URL(location.href);
  url.hash = session ? "session=" + enc(session) : "";
  history.replaceState(null, "", url);
}

/** The session named in the URL fragment, or null. */
export function sessionFromHash() {
  const match = /(?:^#|&)session=([^&]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

/** The status-line kind of a run status. */
export function statusKind(status) {
  if (status === "completed") return "ok";
  if (status === "running") return "busy";
  if (status === "interrupted") return "warn";
  if (status === "failed" || status === "cancelled") return "error";
  return "idle";
}
