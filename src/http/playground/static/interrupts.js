/**
 * An interrupted run's pending calls: client-tool results and approvals, sent with the next run.
 */
import { $, h, pretty } from "./dom.js";
import { showBanner, syncControls, ui } from "./page.js";
import { send } from "./runs.js";
import { markPending } from "./transcript.js";

/** Forgets the pending calls and hides their panel. */
export function hideInterrupt() {
  ui.pending = [];
  $("interrupt").hidden = true;
  $("interrupt-items").replaceChildren();
}

/** Shows the pending calls of an interrupted run, each with a way to answer it. */
export function showInterrupt(pending) {
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
    {
      class: "pending",
      dataset: { callId: p.tool_call_id, kind: "client_tool", tool: p.tool_name },
    },
    h(
      "div",
      { class: "pending-head" },
      h("span", { class: "badge waiting", text: "client tool" }),
      h("strong", { text: p.tool_name }),
      h("code", { class: "muted", text: p.tool_call_id }),
    ),
    question
      ? h("p", { class: "question", text: question })
      : h("pre", { class: "json", text: pretty(args) }),
    h(
      "label",
      { class: "field" },
      "Result (text, or JSON)",
      h("textarea", { rows: "2", class: "answer", "aria-label": "Result of " + p.tool_name }),
    ),
    h(
      "label",
      { class: "check" },
      h("input", { type: "checkbox", class: "is-error" }),
      "Report it as an error",
    ),
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
      h(
        "label",
        { class: "check" },
        h("input", { type: "radio", name, value: "approve" }),
        "Approve",
      ),
      h(
        "label",
        { class: "check" },
        h("input", { type: "radio", name, value: "reject" }),
        "Reject",
      ),
      h("input", {
        type: "text",
        class: "reason",
        placeholder: "Reason (optional)",
        "aria-label": "Reason",
      }),
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

/** Sends the answers of every pending call with the next run. */
export function submitAnswers() {
  const { resume, missing } = collectAnswers();
  if (missing.length > 0) {
    showBanner("Answer every call first: " + missing.join(", ") + ".", "info");
    return;
  }
  const text = $("resume-message").value.trim() || "Here are my answers.";
  send(text, resume);
}
