// A useChat page as an application writes it, against agentd's AI SDK add-on: the agentd URL and
// the chat id come from the query string (`?agentd=http://...&chat=<id>`); the messages are kept
// in sessionStorage, so a reload shows them and `resume: true` picks up an answer in progress.
// Plain createElement, so Vite needs no React plugin.
import { createElement as h, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";

const params = new URLSearchParams(location.search);
const agentd = params.get("agentd");
const chatId = params.get("chat");
const STORE = `chat:${chatId}`;

function Part({ part, approve }) {
  if (part.type === "text") return h("span", { className: "text" }, part.text);
  if (!part.type.startsWith("tool-")) return null;
  return h(
    "div",
    { className: "tool", "data-state": part.state },
    `${part.type.slice(5)}: ${part.state}`,
    part.state === "approval-requested"
      ? h("button", { className: "approve", onClick: () => approve(part.approval.id) }, "approve")
      : null,
  );
}

function App() {
  const [input, setInput] = useState("");
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: chatId,
    messages: JSON.parse(sessionStorage.getItem(STORE) ?? "[]"),
    resume: true,
    transport: new DefaultChatTransport({ api: `${agentd}/ai-sdk/chat` }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  useEffect(() => sessionStorage.setItem(STORE, JSON.stringify(messages)), [messages]);
  const approve = (id) => addToolApprovalResponse({ id, approved: true });
  return h(
    "main",
    { "data-status": status },
    h(
      "ol",
      { id: "messages" },
      messages.map((m) =>
        h(
          "li",
          { key: m.id, className: m.role },
          m.parts.map((part, i) => h(Part, { key: i, part, approve })),
        )
      ),
    ),
    error ? h("p", { id: "error" }, String(error.message)) : null,
    h(
      "form",
      {
        onSubmit: (e) => {
          e.preventDefault();
          sendMessage({ text: input });
          setInput("");
        },
      },
      h("input", { id: "input", value: input, onChange: (e) => setInput(e.target.value) }),
      h("button", { id: "send", type: "submit" }, "send"),
    ),
  );
}

createRoot(document.getElementById("root")).render(h(App));
