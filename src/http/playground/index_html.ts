/**
 * The playground's HTML page. It holds no inline script or style (the Content-Security-Policy
 * allows only the server's own origin): the behaviour is `app_js.ts`, the look `style_css.ts`.
 *
 * @module
 */

/** The page served at `/`. */
export const INDEX_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>agentd playground</title>
<link rel="icon" href="/playground/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/playground/style.css">
<script type="module" src="/playground/app.js"></script>
</head>
<body>
<header class="topbar">
  <div class="brand"><span class="logo" aria-hidden="true"></span>agentd <span class="muted">playground</span></div>
  <div class="session-label">session <code id="session-label">none</code></div>
  <div class="spacer"></div>
  <div id="step" class="step" aria-live="polite"></div>
  <div id="status" class="status" data-kind="idle" role="status" aria-live="polite">idle</div>
</header>

<div class="layout">
  <aside class="column left" aria-label="Sessions and runs">
    <section class="panel">
      <div class="panel-head">
        <h2>Sessions</h2>
        <button id="new-session" type="button" class="small">New session</button>
      </div>
      <ul id="sessions" class="list sessions"></ul>
    </section>
    <section class="panel fill">
      <div class="panel-head">
        <h2>Runs</h2>
        <button id="refresh-runs" type="button" class="small ghost">Refresh</button>
      </div>
      <ul id="runs" class="list runs"></ul>
    </section>
  </aside>

  <main class="chat">
    <div id="banner" class="banner" role="alert" hidden>
      <span id="banner-text"></span>
      <button id="banner-close" type="button" class="icon" aria-label="Dismiss">×</button>
    </div>
    <div id="scroller" class="scroller">
      <div id="empty" class="empty-chat">
        <h1>Talk to the agent</h1>
        <p>Pick or create a session on the left, then send a message. Answers stream in as they are
        written; tool calls, the agent state and tool progress show up as they happen.</p>
      </div>
      <div id="transcript" class="transcript" aria-live="polite"></div>
    </div>

    <section id="interrupt" class="interrupt" aria-label="The agent is waiting for you" hidden>
      <div class="interrupt-head">
        <h2>The agent is waiting for you</h2>
        <button id="interrupt-skip" type="button" class="small ghost" title="Hide; the next message continues without answering">Skip</button>
      </div>
      <div id="interrupt-items" class="pending-list"></div>
      <div class="interrupt-bar">
        <label class="grow"><span class="sr-only">Message sent with the answers</span>
          <input id="resume-message" type="text" value="Here are my answers." aria-label="Message sent with the answers">
        </label>
        <button id="resume" type="button" class="primary">Send answers</button>
      </div>
    </section>

    <form id="composer" class="composer" autocomplete="off">
      <div class="hints" aria-label="Examples">
        <span class="muted">Try:</span>
        <button type="button" class="chip" data-fill="/call progress {&quot;task&quot;: &quot;report&quot;, &quot;steps&quot;: 5}">progress</button>
        <button type="button" class="chip" data-fill="/call word_count {&quot;text&quot;: &quot;the quick brown fox&quot;}">word_count</button>
        <button type="button" class="chip" data-fill="/call deploy {&quot;task&quot;: &quot;v2&quot;, &quot;steps&quot;: 3}">deploy (approval)</button>
        <button type="button" class="chip" data-fill="/call ask_user {&quot;question&quot;: &quot;Which city?&quot;}">ask_user (client tool)</button>
      </div>
      <textarea id="message" rows="3" placeholder="Message the agent (Enter sends, Shift+Enter for a new line)" aria-label="Message"></textarea>
      <div class="composer-bar">
        <label class="check" title="Start with POST /v1/runs/start and follow GET /v1/runs/{id}/events: the run survives a page reload">
          <input id="detached" type="checkbox"> Run in background (detached)
        </label>
        <span id="model-summary" class="muted model-summary"></span>
        <span class="spacer"></span>
        <button id="cancel" type="button" class="danger" disabled>Cancel run</button>
        <button id="send" type="submit" class="primary">Send</button>
      </div>
    </form>
  </main>

  <aside class="column right" aria-label="Run details and settings">
    <section class="panel" id="progress-panel" data-active="false">
      <h2>Progress</h2>
      <progress id="progress" max="1" value="0"></progress>
      <div id="progress-label" class="muted small-text">No progress reported yet.</div>
    </section>
    <section class="panel">
      <h2>State <span class="muted">context</span></h2>
      <pre id="state" class="json state">null</pre>
      <ul id="state-changes" class="changes"></ul>
    </section>
    <section class="panel">
      <h2>Tool events</h2>
      <ul id="customs" class="list customs"><li class="muted">None yet.</li></ul>
    </section>
    <details class="panel" id="model-panel" open>
      <summary><h2>Model for the next run</h2></summary>
      <label class="check"><input id="model-enabled" type="checkbox"> Override the manifest's model</label>
      <div class="grid">
        <label>Provider
          <select id="model-provider">
            <option value="">(manifest)</option>
            <option>echo</option>
            <option>openai</option>
            <option>anthropic</option>
            <option>google</option>
            <option>openai-compatible</option>
          </select>
        </label>
        <label>Model <input id="model-name" type="text" placeholder="(default)"></label>
        <label>Temperature <input id="model-temperature" type="number" step="0.1" min="0" max="2" placeholder="-"></label>
        <label>Max tokens <input id="model-max-tokens" type="number" step="1" min="1" placeholder="-"></label>
        <label>Top p <input id="model-top-p" type="number" step="0.05" min="0" max="1" placeholder="-"></label>
        <label>Seed <input id="model-seed" type="number" step="1" placeholder="-"></label>
      </div>
      <label class="block">Provider params (JSON)
        <textarea id="model-params" rows="2" placeholder="{&quot;delay_ms&quot;: 80}"></textarea>
      </label>
      <label class="check"><input id="client-tool" type="checkbox" checked> Offer the client tool <code>ask_user</code></label>
    </details>
    <details class="panel" id="connection-panel">
      <summary><h2>Connection</h2></summary>
      <label class="block">API key (when the server requires one)
        <input id="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="sent as X-API-Key">
      </label>
      <label class="block">Tenant
        <input id="tenant" type="text" autocomplete="off" spellcheck="false" placeholder="(the server's default)">
      </label>
      <div class="muted small-text">The key stays in this tab (session storage) only.</div>
    </details>
    <details class="panel" id="log-panel">
      <summary><h2>Event log</h2></summary>
      <ol id="events" class="events"></ol>
    </details>
  </aside>
</div>
</body>
</html>
`;
