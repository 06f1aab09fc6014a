/**
 * The session's state history: its checkpoints, newest first, each with the state it saved and
 * "Fork from here", which makes the next run start from that checkpoint (`checkpoint_id`).
 */
import { enc, listAll } from "./api.js";
import { $, clock, compact, h, short } from "./dom.js";
import { showError, ui } from "./page.js";

/** The checkpoint the next run forks from, or null for the session's latest. */
export const fork = { checkpointId: null };

/** Lists the open session's checkpoints (nothing without a session). */
export async function refreshHistory() {
  const id = ui.session;
  if (!id) {
    renderHistory([]);
    return;
  }
  try {
    const items = await listAll("/v1/sessions/" + enc(id) + "/checkpoints");
    if (id === ui.session) renderHistory(items.reverse());
  } catch (err) {
    showError(err);
  }
}

function renderHistory(checkpoints) {
  const list = $("checkpoints");
  list.replaceChildren(
    ...(checkpoints.length === 0 ? [h("li", { class: "muted", text: "No checkpoints yet." })] : []),
    ...checkpoints.map((cp) =>
      h(
        "li",
        { class: "checkpoint", dataset: { checkpointId: cp.checkpoint_id } },
        h(
          "div",
          { class: "checkpoint-head" },
          h("span", { text: "step " + cp.step + " \u00b7 run " + short(cp.run_id || "") }),
          h("span", { class: "time", text: clock(cp.created_at) }),
          h("button", {
            type: "button",
            class: "small ghost fork",
            title: "Start the next run from this checkpoint",
            onclick: () => forkFrom(cp.checkpoint_id),
          }, "Fork from here"),
        ),
        h("code", { class: "muted", text: compact(cp.state.context) }),
      )
    ),
  );
  showFork();
}

function forkFrom(checkpointId) {
  fork.checkpointId = checkpointId;
  showFork();
}

/** Says which checkpoint the next run forks from, if any. */
export function showFork() {
  const id = fork.checkpointId;
  $("fork-note").hidden = !id;
  $("fork-label").textContent = id ? short(id) : "";
  for (
    const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".checkpoint"))
  ) {
    el.dataset.fork = String(el.dataset.checkpointId === id);
  }
}

/** Opens the state editor with the state shown now, or closes it. */
export function toggleStateEdit() {
  const box = $("state-edit-box");
  box.hidden = !box.hidden;
  if (!box.hidden) $("state-edit").value = $("state").textContent;
}

/** The edited state the next run starts from, or undefined; throws on JSON that is no object. */
export function editedState() {
  if ($("state-edit-box").hidden) return undefined;
  const text = $("state-edit").value.trim();
  if (!text) return undefined;
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error("The edited state is not JSON: " + /** @type {Error} */ (err).message);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error("The edited state must be a JSON object");
  }
  return value;
}

/** Closes the state editor (a run used its state). */
export function closeStateEdit() {
  $("state-edit-box").hidden = true;
}

/** Forgets the fork (a run used it, or the person cancelled it). */
export function clearFork() {
  fork.checkpointId = null;
  showFork();
}
