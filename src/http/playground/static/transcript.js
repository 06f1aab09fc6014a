/**
 * The conversation: user messages, streamed agent messages with their reasoning (collapsed) and
 * their tool-call cards.
 */
import { $, h, pretty } from "./dom.js";
import { ui } from "./page.js";

/** Reasoning blocks by id (the `reasoning_message_*` events' `message_id`). */
const reasonings = new Map();

/** Empties the conversation. */
export function resetTranscript() {
  $("transcript").replaceChildren();
  ui.bubbles.clear();
  ui.cards.clear();
  reasonings.clear();
}

/** Shows the welcome text while the conversation is empty. */
export function syncEmpty() {
  $("empty").hidden = $("transcript").children.length > 0;
}

/** Scrolls to the end when the reader is near it (or always, with `force`). */
export function scrollDown(force) {
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

/** Appends a user message. */
export function addUser(text, id) {
  return append(h(
    "div",
    { class: "msg user", dataset: { messageId: id || "" } },
    h("div", { class: "role", text: "you" }),
    h("div", { class: "bubble" }, h("div", { class: "text", text })),
  ));
}

/** The agent message of this id, created at the end when new. */
export function bubble(id) {
  let b = ui.bubbles.get(id);
  if (b) return b;
  const reasoningEl = h("div", { class: "reasonings" });
  const textEl = h("div", { class: "text" });
  const toolsEl = h("div", { class: "tools" });
  const el = h(
    "div",
    { class: "msg assistant", dataset: { messageId: id } },
    h("div", { class: "role", text: "agent" }),
    h("div", { class: "bubble" }, reasoningEl, textEl, toolsEl),
  );
  b = { el, reasoningEl, textEl, toolsEl };
  ui.bubbles.set(id, b);
  append(el);
  return b;
}

/**
 * The reasoning block `id` of agent message `parentId`, created collapsed when new: the model's
 * thinking is there to open, not in the way of its answer.
 */
export function reasoningBlock(id, parentId) {
  let block = reasonings.get(id);
  if (block) return block;
  const summaryEl = h("summary", { text: "Reasoning" });
  const textEl = h("div", { class: "reasoning-text" });
  const el = h("details", { class: "reasoning", dataset: { reasoningId: id } }, summaryEl, textEl);
  bubble(parentId).reasoningEl.append(el);
  block = { el, summaryEl, textEl };
  reasonings.set(id, block);
  return block;
}

/** Ends a reasoning block: its summary says how long it is, or that only the provider can read it. */
export function endReasoning(block, encrypted) {
  block.el.classList.remove("streaming");
  const words = (block.textEl.textContent.match(/\S+/g) || []).length;
  block.summaryEl.textContent = words > 0
    ? "Reasoning \u00b7 " + words + " word" + (words === 1 ? "" : "s")
    : encrypted
    ? "Reasoning (encrypted by the provider)"
    : "Reasoning";
}

/** Draws a `reasoning_message_*` event. */
export function onReasoning(ev) {
  if (ev.kind === "reasoning_message_start") {
    reasoningBlock(ev.message_id, ev.parent_message_id).el.classList.add("streaming");
    scrollDown(false);
    return;
  }
  // Joined after its start (a live-only re-attach): in a message of its own.
  const block = reasoningBlock(ev.message_id, "reasoning-" + ev.message_id);
  if (ev.kind === "reasoning_message_content") block.textEl.textContent += ev.delta;
  else endReasoning(block, !!ev.encrypted_value);
}

/** Appends streamed arguments to a tool call's card. */
export function addCardArgs(id, delta) {
  const card = ui.cards.get(id);
  if (!card) return;
  card.argsText += delta;
  card.argsEl.textContent = card.argsText;
}

/** The arguments of a tool call are complete: shown as JSON when they parse. */
export function endCardArgs(id) {
  const card = ui.cards.get(id);
  if (!card) return;
  try {
    card.argsEl.textContent = pretty(JSON.parse(card.argsText));
  } catch {
    // Keep the raw text.
  }
  setCardStatus(card, "called", "called");
}

/** The card of a tool call, created in its message when new. */
export function toolCard(id, name, parentId) {
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

/** Sets a tool card's status badge. */
export function setCardStatus(card, status, label) {
  card.el.dataset.status = status;
  card.statusEl.className = "badge " + status;
  card.statusEl.textContent = label || status;
}

function isErrorResult(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && "error" in value;
}

/** Shows a tool call's result on its card. */
export function setCardResult(card, content, isError) {
  card.resultRow.hidden = false;
  card.resultEl.textContent = pretty(content);
  const rejected = isError && content && content.error === "the user rejected this tool call";
  setCardStatus(
    card,
    isError ? "error" : "done",
    rejected ? "rejected" : isError ? "error" : "done",
  );
}

/** Rebuilds the conversation from message records (history, or a messages_snapshot). */
export function renderMessages(messages) {
  resetTranscript();
  for (const m of messages) {
    if (m.role === "user") {
      const text = textOf(m.content);
      addUser(text || pretty(dataOf(m.content)), m.message_id);
    } else if (m.role === "assistant") {
      const b = bubble(m.message_id);
      (m.content || []).forEach((p, i) => {
        if (p.type !== "reasoning") return;
        const block = reasoningBlock(m.message_id + ":" + i, m.message_id);
        block.textEl.textContent = p.value || "";
        endReasoning(block, !p.value);
      });
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
      append(
        h("div", { class: "msg system" }, h("div", { class: "note", text: textOf(m.content) })),
      );
    }
  }
  markPending();
  syncEmpty();
  scrollDown(true);
}

/** Marks the cards of calls the run waits on. */
export function markPending() {
  for (const p of ui.pending) {
    const card = ui.cards.get(p.tool_call_id);
    if (card && card.el.dataset.status !== "done" && card.el.dataset.status !== "error") {
      setCardStatus(card, "waiting", p.kind === "approval" ? "needs approval" : "waiting for you");
    }
  }
}
