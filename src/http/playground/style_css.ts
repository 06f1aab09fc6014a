/**
 * The playground's stylesheet: a three-column layout (sessions and runs, the conversation, run
 * details and settings) sized for a laptop screen, light and dark.
 *
 * @module
 */

/** The stylesheet served at `/playground/style.css`. */
export const STYLE_CSS = String.raw`:root {
  --bg: #f5f6f8;
  --panel: #ffffff;
  --border: #e2e5ea;
  --text: #1c2230;
  --muted: #687083;
  --accent: #4f46e5;
  --accent-text: #ffffff;
  --accent-soft: #eef0fe;
  --user: #4f46e5;
  --ok: #15803d;
  --ok-soft: #e8f6ed;
  --warn: #b45309;
  --warn-soft: #fdf3e3;
  --err: #b91c1c;
  --err-soft: #fdecec;
  --code-bg: #f3f4f7;
  --radius: 8px;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #14161b;
    --panel: #1c1f26;
    --border: #2d313b;
    --text: #e6e8ee;
    --muted: #9aa1b2;
    --accent: #818cf8;
    --accent-text: #11131a;
    --accent-soft: #262a45;
    --user: #5b54e8;
    --ok: #4ade80;
    --ok-soft: #173222;
    --warn: #fbbf24;
    --warn-soft: #3a2f14;
    --err: #f87171;
    --err-soft: #3b1d1d;
    --code-bg: #23262e;
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html, body { height: 100%; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--text);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  display: flex;
  flex-direction: column;
  overflow: hidden;
}
code, pre, .mono { font-family: var(--mono); font-size: 12px; }
h1, h2 { margin: 0; font-weight: 600; }
h2 { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); }
h2 .muted { text-transform: none; letter-spacing: 0; font-weight: 400; }
.muted { color: var(--muted); }
.small-text { font-size: 12px; }
.spacer { flex: 1; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

button {
  font: inherit;
  border: 1px solid var(--border);
  background: var(--panel);
  color: var(--text);
  border-radius: 6px;
  padding: 6px 14px;
  cursor: pointer;
}
button:hover:not(:disabled) { border-color: var(--accent); }
button:disabled { opacity: 0.45; cursor: default; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-text); font-weight: 600; }
button.danger { color: var(--err); }
button.danger:hover:not(:disabled) { border-color: var(--err); background: var(--err-soft); }
button.small { padding: 2px 9px; font-size: 12px; }
button.ghost { background: transparent; }
button.icon { border: none; background: transparent; font-size: 18px; line-height: 1; padding: 0 4px; color: inherit; }
input, select, textarea {
  font: inherit;
  color: var(--text);
  background: var(--panel);
  border: 1px solid var(--border);
  border-radius: 6px;
  padding: 5px 8px;
  width: 100%;
}
input[type="checkbox"], input[type="radio"] { width: auto; accent-color: var(--accent); margin: 0; }
textarea { resize: vertical; }
input:focus, select:focus, textarea:focus, button:focus-visible { outline: 2px solid var(--accent); outline-offset: -1px; }
label.check { display: inline-flex; align-items: center; gap: 6px; font-size: 13px; cursor: pointer; }

/* Top bar */
.topbar {
  display: flex;
  align-items: center;
  gap: 16px;
  height: 48px;
  padding: 0 16px;
  background: var(--panel);
  border-bottom: 1px solid var(--border);
  flex: none;
}
.brand { font-weight: 700; font-size: 15px; display: flex; align-items: center; gap: 8px; }
.brand .muted { font-weight: 400; }
.logo { width: 14px; height: 14px; background: var(--accent); transform: rotate(45deg); border-radius: 3px; }
.session-label { color: var(--muted); font-size: 13px; }
.session-label code { color: var(--text); }
.step { color: var(--muted); font-size: 12px; font-family: var(--mono); }
.status {
  display: inline-flex;
  align-items: center;
  gap: 6px;
  font-size: 13px;
  padding: 3px 10px;
  border-radius: 999px;
  background: var(--code-bg);
}
.status::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--muted); }
.status[data-kind="busy"]::before { background: var(--accent); animation: pulse 1s infinite; }
.status[data-kind="ok"]::before { background: var(--ok); }
.status[data-kind="warn"]::before { background: var(--warn); }
.status[data-kind="error"]::before { background: var(--err); }
@keyframes pulse { 50% { opacity: 0.3; } }

/* Layout */
.layout {
  flex: 1;
  min-height: 0;
  display: grid;
  grid-template-columns: 250px minmax(0, 1fr) 320px;
}
.column { min-height: 0; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 12px; }
.column.left { border-right: 1px solid var(--border); }
.column.right { border-left: 1px solid var(--border); }
.panel {
  background: var(--panel);
  border: 1px solid var(--border);
  border-radius: var(--radius);
  padding: 10px 12px;
  display: flex;
  flex-direction: column;
  gap: 8px;
}
.panel.fill { flex: 1; min-height: 160px; }
.panel-head { display: flex; align-items: center; justify-content: space-between; gap: 8px; }
details.panel > summary { cursor: pointer; list-style: none; display: flex; align-items: center; gap: 6px; }
details.panel > summary::-webkit-details-marker { display: none; }
details.panel > summary::before { content: "\25B8"; color: var(--muted); font-size: 11px; }
details.panel[open] > summary::before { content: "\25BE"; }
details.panel:not([open]) { gap: 0; }

/* Lists */
.list { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 4px; overflow-y: auto; }
.sessions { max-height: 30vh; }
.list > li { flex: none; }
.list .empty, .list > .muted { font-size: 12px; padding: 4px 2px; }
.session-item {
  width: 100%;
  text-align: left;
  display: flex;
  flex-direction: column;
  gap: 1px;
  padding: 5px 8px;
  border-color: transparent;
  background: transparent;
}
.session-item code { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.session-item .time { font-size: 11px; color: var(--muted); }
.session-item[aria-current="true"] { background: var(--accent-soft); border-color: var(--accent); }
.run {
  border: 1px solid var(--border);
  border-radius: 6px;
  padding: 6px 8px;
  display: flex;
  flex-direction: column;
  gap: 4px;
  font-size: 12px;
}
.run.current { border-color: var(--accent); box-shadow: inset 3px 0 0 var(--accent); }
.run-line { display: flex; align-items: center; gap: 6px; }
.run-line .time { margin-left: auto; color: var(--muted); white-space: nowrap; }
.run-id { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 11px; }
.run-actions { display: flex; align-items: center; gap: 6px; }
.run-error { color: var(--err); overflow-wrap: anywhere; }

.badge {
  display: inline-block;
  font-size: 11px;
  font-weight: 600;
  padding: 1px 7px;
  border-radius: 999px;
  background: var(--code-bg);
  color: var(--muted);
  white-space: nowrap;
}
.badge.running, .badge.calling, .badge.called { background: var(--accent-soft); color: var(--accent); }
.badge.completed, .badge.done { background: var(--ok-soft); color: var(--ok); }
.badge.interrupted, .badge.waiting { background: var(--warn-soft); color: var(--warn); }
.badge.failed, .badge.error, .badge.cancelled { background: var(--err-soft); color: var(--err); }

/* Conversation */
.chat { min-width: 0; min-height: 0; display: flex; flex-direction: column; }
.banner {
  margin: 12px 16px 0;
  padding: 8px 12px;
  border-radius: var(--radius);
  background: var(--err-soft);
  color: var(--err);
  display: flex;
  align-items: flex-start;
  gap: 8px;
}
.banner[data-kind="info"] { background: var(--warn-soft); color: var(--warn); }
.banner span { flex: 1; overflow-wrap: anywhere; }
.scroller { flex: 1; min-height: 0; overflow-y: auto; padding: 16px 24px; }
.empty-chat { max-width: 520px; margin: 12vh auto 0; text-align: center; color: var(--muted); }
.empty-chat h1 { font-size: 20px; color: var(--text); margin-bottom: 8px; }
.transcript { display: flex; flex-direction: column; gap: 14px; max-width: 860px; margin: 0 auto; }
.msg { display: flex; flex-direction: column; gap: 3px; max-width: 85%; }
.msg .role { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
.msg .bubble { border-radius: 12px; padding: 8px 12px; display: flex; flex-direction: column; gap: 8px; }
.msg .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.msg .text:empty { display: none; }
.msg.user { align-self: flex-end; align-items: flex-end; }
.msg.user .bubble { background: var(--user); color: #fff; border-bottom-right-radius: 4px; }
.msg.user.sending .bubble { opacity: 0.6; }
.msg.assistant { align-self: flex-start; min-width: 50%; }
.msg.assistant .bubble { background: var(--panel); border: 1px solid var(--border); border-bottom-left-radius: 4px; }
.msg.assistant .bubble:has(> .text:empty):has(> .tools:empty) { min-height: 36px; }
.msg.assistant.streaming .text::after {
  content: "";
  display: inline-block;
  width: 7px;
  height: 1em;
  margin-left: 2px;
  vertical-align: text-bottom;
  background: var(--accent);
  animation: pulse 0.8s infinite;
}
.msg.assistant.partial .text::before { content: "\2026 "; color: var(--muted); }
.msg.system { align-self: center; max-width: 90%; }
.msg.system .note { font-size: 12px; color: var(--muted); background: var(--code-bg); border-radius: 6px; padding: 4px 10px; white-space: pre-wrap; }
.tools { display: flex; flex-direction: column; gap: 8px; }
.tools:empty { display: none; }
.toolcall { border: 1px solid var(--border); border-left: 3px solid var(--accent); border-radius: 6px; padding: 6px 10px; background: var(--bg); display: flex; flex-direction: column; gap: 4px; }
.toolcall[data-status="done"] { border-left-color: var(--ok); }
.toolcall[data-status="waiting"] { border-left-color: var(--warn); }
.toolcall[data-status="error"] { border-left-color: var(--err); }
.toolcall-head { display: flex; align-items: center; gap: 8px; }
.tool-name { font-weight: 600; font-family: var(--mono); font-size: 13px; }
.call-id { color: var(--muted); font-size: 11px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; flex: 1; }
.kv { display: grid; grid-template-columns: 72px minmax(0, 1fr); gap: 8px; align-items: start; }
.kv .k { font-size: 11px; color: var(--muted); padding-top: 5px; }
pre.json { margin: 0; padding: 5px 8px; background: var(--code-bg); border-radius: 5px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 220px; overflow-y: auto; }
.toolcall[data-status="error"] pre.result { color: var(--err); }

/* Interrupt */
.interrupt {
  margin: 0 16px 10px;
  border: 1px solid var(--warn);
  background: var(--warn-soft);
  border-radius: var(--radius);
  padding: 10px 12px;
  display: flex;
  flex-direction: column;
  gap: 8px;
  max-height: 45vh;
  overflow-y: auto;
}
.interrupt-head { display: flex; align-items: center; justify-content: space-between; }
.interrupt h2 { color: var(--warn); }
.pending-list { display: flex; flex-direction: column; gap: 8px; }
.pending { background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; display: flex; flex-direction: column; gap: 6px; }
.pending-head { display: flex; align-items: center; gap: 8px; }
.pending-head strong { font-family: var(--mono); }
.pending .question { margin: 0; font-size: 15px; }
.choices { display: flex; gap: 16px; }
.interrupt-bar { display: flex; gap: 8px; align-items: center; }
.grow { flex: 1; }
.field { display: flex; flex-direction: column; gap: 3px; font-size: 12px; color: var(--muted); }

/* Composer */
.composer { border-top: 1px solid var(--border); background: var(--panel); padding: 10px 16px 12px; display: flex; flex-direction: column; gap: 8px; }
.hints { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; font-size: 12px; }
.chip { padding: 1px 10px; border-radius: 999px; font-size: 12px; font-family: var(--mono); background: var(--bg); }
.composer textarea { min-height: 56px; max-height: 30vh; }
.composer-bar { display: flex; align-items: center; gap: 10px; }
.model-summary { font-size: 12px; font-family: var(--mono); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }

/* Right column */
progress { width: 100%; height: 10px; appearance: none; border: none; border-radius: 999px; background: var(--code-bg); overflow: hidden; }
progress::-webkit-progress-bar { background: var(--code-bg); border-radius: 999px; }
progress::-webkit-progress-value { background: var(--accent); border-radius: 999px; transition: width 0.15s ease; }
progress::-moz-progress-bar { background: var(--accent); border-radius: 999px; }
#progress-panel[data-active="done"] progress::-webkit-progress-value { background: var(--ok); }
#progress-panel[data-active="done"] progress::-moz-progress-bar { background: var(--ok); }
pre.state { max-height: 240px; }
pre.flash { animation: flash 1s ease-out; }
@keyframes flash { from { background: var(--accent-soft); box-shadow: 0 0 0 2px var(--accent); } }
.changes { list-style: none; margin: 0; padding: 0; font-family: var(--mono); font-size: 11px; color: var(--muted); display: flex; flex-direction: column; gap: 2px; }
.changes li { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.changes .op { color: var(--accent); font-weight: 600; }
.customs { max-height: 160px; font-size: 12px; }
.customs li { display: flex; gap: 6px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.customs code:first-child { color: var(--accent); font-weight: 600; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 6px 8px; }
.grid label, label.block { display: flex; flex-direction: column; gap: 2px; font-size: 12px; color: var(--muted); }
.events { margin: 0; padding: 0 0 0 4px; list-style: none; max-height: 300px; overflow-y: auto; font-family: var(--mono); font-size: 11px; }
.events li { display: flex; gap: 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.events .kind { color: var(--accent); }
.events .t { color: var(--muted); }

@media (max-width: 1100px) {
  .layout { grid-template-columns: 220px minmax(0, 1fr) 280px; }
}
@media (max-width: 860px) {
  body { overflow: auto; }
  .layout { display: flex; flex-direction: column; }
  .column { overflow: visible; border: none !important; }
  .chat { min-height: 80vh; }
}
`;
