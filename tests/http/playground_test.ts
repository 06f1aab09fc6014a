/**
 * The built-in playground, driven in headless Chromium (Debian's `chromium` through
 * `playwright-core`) against a real server with the offline echo model and the quickstart
 * manifest's tools: streaming, tool calls with state changes and progress, cancel, reload and
 * re-attach to a detached run, client-tool and approval interrupts, a refused model override.
 * Screenshots go to tests/artifacts/ (git-ignored).
 *
 * Without Chromium the test fails with a message saying how to install it: it is never skipped.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright-core";
import { loadConfig } from "../../src/config/load.ts";
import { PLAYGROUND_PATHS } from "../../src/http/playground/mod.ts";
import { slowTest, startTestServer, tempDir, type TestServer } from "../_kit/mod.ts";

const CHROMIUM = Deno.env.get("AGENTD_TEST_CHROMIUM") ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));
const QUICKSTART = fileURLToPath(new URL("../../examples/quickstart/agent.hcl", import.meta.url));

/** Throws a clear error when the browser the test needs is missing. */
async function requireChromium(): Promise<void> {
  try {
    const info = await Deno.stat(CHROMIUM);
    if (info.isFile) return;
  } catch {
    // Reported below.
  }
  throw new Error(
    `Chromium is not installed at ${CHROMIUM}, and the playground test needs a real browser. ` +
      "Install it with `apt-get update && apt-get install -y chromium` (.ci/run does), or set " +
      "AGENTD_TEST_CHROMIUM to the path of a Chromium binary.",
  );
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}playground_${name}.png` });
}

/** Text of an element, or "" when it is absent. */
async function textOf(page: Page, selector: string): Promise<string> {
  const el = page.locator(selector);
  return (await el.count()) > 0 ? (await el.first().textContent()) ?? "" : "";
}

/** Starts a fresh session through the page and waits for it to be selected. */
async function newSession(page: Page): Promise<string> {
  const before = await textOf(page, "#session-label");
  await page.click("#new-session");
  await page.waitForFunction(
    (old) => {
      const label = document.getElementById("session-label")!.textContent;
      return label !== old && label !== "none";
    },
    before,
  );
  const id = await textOf(page, "#session-label");
  await page.locator(`.session-item[aria-current="true"][data-session-id="${id}"]`).waitFor();
  return id;
}

/** Sets the model override form: the echo provider with a delay between deltas. */
async function useEcho(page: Page, delayMs: number, model = ""): Promise<void> {
  await page.check("#model-enabled");
  await page.selectOption("#model-provider", "echo");
  await page.fill("#model-name", model);
  await page.fill("#model-params", JSON.stringify({ delay_ms: delayMs }));
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill("#message", text);
  await page.click("#send");
}

/** Waits until the newest run of the runs list has `status`; returns its id. */
async function newestRun(page: Page, status: string): Promise<string> {
  const first = page.locator("#runs .run").first();
  await page.waitForFunction(
    (s) => document.querySelector<HTMLElement>("#runs .run")?.dataset.status === s,
    status,
  );
  return (await first.getAttribute("data-run-id"))!;
}

/** Waits for the page to be idle again (no run followed). */
async function idle(page: Page): Promise<void> {
  await page.waitForFunction(() =>
    !(document.getElementById("send") as HTMLButtonElement).disabled &&
    document.getElementById("status")!.dataset.kind !== "busy"
  );
}

async function lastAgentText(page: Page): Promise<string> {
  return await page.evaluate(() => {
    const all = document.querySelectorAll(".msg.assistant .text");
    return all.length ? all[all.length - 1].textContent ?? "" : "";
  });
}

async function runRecord(server: TestServer, id: string): Promise<Record<string, unknown>> {
  const res = await server.fetch(`/v1/runs/${id}`);
  assert.equal(res.status, 200);
  return await res.json();
}

async function sessionMessages(server: TestServer, session: string) {
  const res = await server.fetch(`/v1/sessions/${session}/messages`);
  assert.equal(res.status, 200);
  return (await res.json()).items as {
    role: string;
    content: { type: string; value: unknown }[];
    tool_call_id?: string;
  }[];
}

slowTest({
  name: "playground: a person drives the agent from the built-in page",
  // Playwright keeps a pipe to the browser and timers of its own between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await requireChromium();
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const quickstart = await loadConfig(QUICKSTART, {});
    await using server = await startTestServer({
      manifest: { tool: quickstart.manifest.tool, http_server: { keepalive: 1000 } },
    });
    const problems: string[] = [];
    await using browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      // A refused request is logged by the browser itself; everything else is a bug.
      if (msg.type() === "error" && !/Failed to load resource/.test(msg.text())) {
        problems.push(`console error: ${msg.text()}`);
      }
    });

    await t.step("serves the page and its assets with a strict CSP", async () => {
      const expected: Record<string, string> = {
        "/": "text/html",
        "/playground/app.js": "text/javascript",
        "/playground/sse.js": "text/javascript",
        "/playground/style.css": "text/css",
        "/playground/favicon.svg": "image/svg+xml",
      };
      // Every file the page serves, also those listed above.
      for (const path of Object.keys(PLAYGROUND_PATHS)) {
        expected[path] ??= PLAYGROUND_PATHS[path].split(";")[0];
      }
      for (const [path, type] of Object.entries(expected)) {
        const res = await server.fetch(path);
        const body = await res.text();
        assert.equal(res.status, 200, path);
        assert.ok(res.headers.get("content-type")!.startsWith(type), path);
        const csp = res.headers.get("content-security-policy")!;
        assert.match(csp, /default-src 'self'/);
        assert.match(csp, /script-src 'self'/);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*|https?:/);
        assert.equal(res.headers.get("x-content-type-options"), "nosniff");
        assert.ok(body.length > 0);
        // Nothing is loaded from another origin.
        assert.doesNotMatch(body, /(src|href)="(https?:)?\/\//);
        const again = await server.fetch(path, {
          headers: { "if-none-match": res.headers.get("etag")! },
        });
        assert.equal(again.status, 304);
        await again.body?.cancel();
      }
      await page.goto(server.url + "/");
      await page.locator("body[data-ready=true]").waitFor();
      assert.equal(await page.title(), "agentd playground");
      assert.equal(await textOf(page, "#session-label"), "none");
      assert.match(await textOf(page, "#sessions"), /No sessions yet/);
    });

    await t.step("streams an answer into the page", async () => {
      const session = await newSession(page);
      await useEcho(page, 80);
      assert.match(await textOf(page, "#model-summary"), /echo/);
      const words = "one two three four five six seven eight nine ten eleven twelve";
      await send(page, words);
      // Part of the answer is on the page while the run is still going.
      await page.waitForFunction(() => {
        const text = document.querySelector(".msg.assistant .text")?.textContent ?? "";
        return text.length > 0 && document.getElementById("status")!.dataset.kind === "busy";
      });
      const partial = await lastAgentText(page);
      assert.ok(words.startsWith(partial) && partial.length < words.length, partial);
      assert.ok(await page.locator(".msg.assistant.streaming").count() > 0);
      assert.match(await textOf(page, "#status"), /running .* attached/);
      await screenshot(page, "streaming");
      const runId = await newestRun(page, "completed");
      await idle(page);
      assert.equal(await lastAgentText(page), words);
      assert.equal(await textOf(page, ".msg.user .text"), words);
      assert.match(await textOf(page, "#status"), /completed/);
      assert.equal((await runRecord(server, runId)).session_id, session);
      // The event log saw the native stream.
      const log = await textOf(page, "#events");
      for (const kind of ["run_started", "text_message_content", "run_finished"]) {
        assert.ok(log.includes(kind), kind);
      }
    });

    await t.step("shows tool calls, state changes and progress", async () => {
      await newSession(page);
      await useEcho(page, 10);
      await send(page, '/call progress {"task": "demo", "steps": 6}');
      const card = page.locator('.toolcall[data-tool="progress"]');
      await card.waitFor();
      // The progress bar moves while the tool works.
      await page.waitForFunction(() => {
        const bar = document.getElementById("progress") as HTMLProgressElement;
        return bar.value > 0 && bar.value < 1;
      });
      await screenshot(page, "progress");
      await newestRun(page, "completed");
      await idle(page);
      assert.match(await card.locator(".args").textContent() ?? "", /"task": "demo"/);
      assert.match(await card.locator(".result").textContent() ?? "", /"done": "demo"/);
      assert.equal(await card.getAttribute("data-status"), "done");
      assert.equal(
        await page.locator("#progress").evaluate((el) => (el as HTMLProgressElement).value),
        1,
      );
      assert.equal(await textOf(page, "#progress-label"), "demo: 100%");
      const state = JSON.parse(await textOf(page, "#state"));
      assert.deepEqual(state, { counter: 1, last_task: "demo" });
      assert.match(await textOf(page, "#customs"), /progress/);
      assert.match(await lastAgentText(page), /progress returned: /);

      // A second call changes the existing state: a delta, listed as operations.
      await send(page, '/call progress {"task": "again", "steps": 2}');
      await newestRun(page, "completed");
      await idle(page);
      assert.deepEqual(JSON.parse(await textOf(page, "#state")), {
        counter: 2,
        last_task: "again",
      });
      const changes = await textOf(page, "#state-changes");
      assert.match(changes, /add \/counter = 2/);
      assert.match(changes, /add \/last_task = "again"/);
      assert.equal(await page.locator('.toolcall[data-tool="progress"]').count(), 2);
      await screenshot(page, "tools_state");

      // Reloaded, the page reads the state back from the session's latest checkpoint.
      await page.reload();
      await page.locator("body[data-ready=true]").waitFor();
      await page.waitForFunction(() =>
        document.querySelector("#state")?.textContent?.includes("again")
      );
      assert.deepEqual(JSON.parse(await textOf(page, "#state")), {
        counter: 2,
        last_task: "again",
      });
    });

    await t.step("cancels a running run", async () => {
      const session = await newSession(page);
      await useEcho(page, 150);
      const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
      await send(page, words);
      await page.waitForFunction(() =>
        (document.querySelector(".msg.assistant .text")?.textContent ?? "").length > 0
      );
      await page.click("#cancel");
      const runId = await newestRun(page, "cancelled");
      await idle(page);
      assert.match(await textOf(page, "#status"), /cancelled/);
      assert.equal((await runRecord(server, runId)).status, "cancelled");
      // The partial answer stays, shorter than the whole.
      const text = await lastAgentText(page);
      assert.ok(text.length > 0 && text.length < words.length, text);
      const stored = await sessionMessages(server, session);
      assert.equal(stored.at(-1)?.role, "assistant");
      await screenshot(page, "cancelled");
    });

    await t.step("re-attaches to a detached run after a reload", async () => {
      const session = await newSession(page);
      await useEcho(page, 150);
      await page.check("#detached");
      const words = Array.from({ length: 24 }, (_, i) => `part${i}`).join(" ");
      await send(page, words);
      await page.waitForFunction(() =>
        (document.querySelector(".msg.assistant .text")?.textContent ?? "").split(" ").length > 3
      );
      assert.match(await textOf(page, "#status"), /detached/);
      const runId = await page.locator("#runs .run.current").getAttribute("data-run-id");
      assert.ok(runId);
      assert.ok(page.url().includes(`#session=${session}`), page.url());

      await page.reload();
      await page.locator("body[data-ready=true]").waitFor();
      assert.equal(await textOf(page, "#session-label"), session);
      assert.match(await textOf(page, "#status"), new RegExp(`running ${runId!.slice(0, 8)}`));
      assert.match(await textOf(page, "#status"), /re-attached/);
      // The run's events are replayed from its start: the answer from its first word, growing.
      await page.waitForFunction(() =>
        (document.querySelector(".msg.assistant .text")?.textContent ?? "").startsWith("part0 ")
      );
      await screenshot(page, "reattached");
      await page.waitForFunction(() => document.getElementById("status")!.dataset.kind === "ok");
      await idle(page);
      assert.equal((await runRecord(server, runId!)).status, "completed");
      // Once it finished, the page shows the stored answer whole.
      assert.equal(await lastAgentText(page), words);
      assert.equal(await page.locator(".msg.assistant.partial").count(), 0);
      assert.equal(
        await page.locator(`#runs .run[data-run-id="${runId}"]`).getAttribute("data-status"),
        "completed",
      );
      await page.uncheck("#detached");
    });

    await t.step(
      "reloaded mid-answer, shows the whole answer once and keeps streaming",
      async () => {
        const session = await newSession(page);
        await useEcho(page, 60);
        const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
        await send(page, words);
        await page.waitForFunction(() =>
          (document.querySelector(".msg.assistant .text")?.textContent ?? "").split(" ").length > 4
        );
        assert.match(await textOf(page, "#status"), /· attached/);
        const runId = await page.locator("#runs .run.current").getAttribute("data-run-id");
        await page.reload();
        await page.locator("body[data-ready=true]").waitFor();
        assert.equal(await textOf(page, "#session-label"), session);
        // The reload did not cancel the run: the page follows it again, from its first word.
        assert.match(await textOf(page, "#status"), /re-attached/);
        const during = await page.evaluate(() =>
          [...document.querySelectorAll(".msg.assistant .text")].map((e) => e.textContent)
        );
        assert.ok(during.length <= 1, `one answer bubble: ${JSON.stringify(during)}`);
        await page.waitForFunction(
          (all) => (document.querySelector(".msg.assistant .text")?.textContent ?? "") === all,
          words,
        );
        await idle(page);
        assert.equal((await runRecord(server, runId!)).status, "completed");
        const answers = await page.evaluate(() =>
          [...document.querySelectorAll(".msg.assistant .text")].map((e) => e.textContent)
        );
        assert.deepEqual(answers, [words], "the whole answer, exactly once");
        assert.equal(await page.locator(".msg.user").count(), 1);
        await screenshot(page, "reloaded_mid_answer");
      },
    );

    await t.step("answers a client tool call", async () => {
      const session = await newSession(page);
      await useEcho(page, 10);
      // Not offered unless the person asks for it: the agent does not have it.
      assert.equal(await page.isChecked("#client-tool"), false);
      await page.check("#client-tool");
      await send(page, '/call ask_user {"question": "Which city?"}');
      await page.locator("#interrupt:not([hidden])").waitFor();
      const runId = await newestRun(page, "interrupted");
      const item = page.locator('#interrupt .pending[data-kind="client_tool"]');
      assert.equal(await item.getAttribute("data-tool"), "ask_user");
      assert.equal(await item.locator(".question").textContent(), "Which city?");
      const card = page.locator('.toolcall[data-tool="ask_user"]');
      assert.equal(await card.getAttribute("data-status"), "waiting");
      const pending = (await runRecord(server, runId)).interrupt_payload as {
        pending: { kind: string; tool_call_id: string }[];
      };
      assert.equal(pending.pending[0].kind, "client_tool");
      await item.locator("textarea.answer").fill("Paris");
      await screenshot(page, "client_tool");
      await page.click("#resume");
      await page.locator("#interrupt").waitFor({ state: "hidden" });
      await newestRun(page, "completed");
      await idle(page);
      assert.equal(await card.getAttribute("data-status"), "done");
      assert.equal(await card.locator(".result").textContent(), "Paris");
      const stored = await sessionMessages(server, session);
      const answer = stored.find((m) => m.role === "tool");
      assert.equal(answer?.tool_call_id, pending.pending[0].tool_call_id);
      assert.deepEqual(answer?.content, [{ type: "data", value: "Paris" }]);
    });

    await t.step("approves and rejects a tool call that needs approval", async () => {
      await newSession(page);
      await useEcho(page, 10);
      await send(page, '/call deploy {"task": "v2", "steps": 3}');
      await page.locator("#interrupt:not([hidden])").waitFor();
      await newestRun(page, "interrupted");
      const item = page.locator('#interrupt .pending[data-kind="approval"]');
      assert.equal(await item.getAttribute("data-tool"), "deploy");
      assert.match(await item.locator("pre").textContent() ?? "", /"task": "v2"/);
      await item.locator('input[value="approve"]').check();
      await screenshot(page, "approval");
      await page.click("#resume");
      await newestRun(page, "completed");
      await idle(page);
      const approved = page.locator('.toolcall[data-tool="deploy"]').first();
      assert.equal(await approved.getAttribute("data-status"), "done");
      assert.match(await approved.locator(".result").textContent() ?? "", /"done": "v2"/);
      assert.equal(await textOf(page, "#progress-label"), "v2: 100%");
      assert.deepEqual(JSON.parse(await textOf(page, "#state")), { counter: 1, last_task: "v2" });

      await send(page, '/call deploy {"task": "v3"}');
      await page.locator("#interrupt:not([hidden])").waitFor();
      const again = page.locator('#interrupt .pending[data-kind="approval"]');
      await again.locator('input[value="reject"]').check();
      await again.locator("input.reason").fill("not today");
      await page.click("#resume");
      await newestRun(page, "completed");
      await idle(page);
      const rejected = page.locator('.toolcall[data-tool="deploy"]').nth(1);
      assert.equal(await rejected.getAttribute("data-status"), "error");
      assert.equal(await rejected.locator(".badge").textContent(), "rejected");
      assert.match(await rejected.locator(".result").textContent() ?? "", /not today/);
      // The rejected call changed nothing.
      assert.deepEqual(JSON.parse(await textOf(page, "#state")), { counter: 1, last_task: "v2" });
      const runs = await page.locator("#runs .run").evaluateAll((els) =>
        els.map((el) => (el as HTMLElement).dataset.status)
      );
      assert.deepEqual(runs, ["completed", "interrupted", "completed", "interrupted"]);
      await screenshot(page, "rejected");
    });

    await t.step("sends the model override, and shows a refusal", async () => {
      await useEcho(page, 10, "gpt-9");
      const before = await page.locator("#runs .run").count();
      await send(page, "hello");
      await page.locator("#banner:not([hidden])").waitFor();
      assert.match(await textOf(page, "#banner-text"), /model\.override\.model/);
      assert.equal(await page.locator("#runs .run").count(), before);
      // The message stays in the composer to send again.
      assert.equal(await page.inputValue("#message"), "hello");
      await screenshot(page, "refused_override");
      await page.fill("#model-name", "");
      await page.click("#send");
      await newestRun(page, "completed");
      await idle(page);
      assert.ok(await page.locator("#banner").isHidden());
      assert.equal(await lastAgentText(page), "hello");
    });

    await t.step("works in another tenant", async () => {
      await page.click("#connection-panel summary");
      await page.fill("#tenant", "acme");
      await page.press("#tenant", "Tab");
      await page.waitForFunction(() =>
        document.getElementById("sessions")!.textContent!.includes("No sessions yet")
      );
      assert.equal(await textOf(page, "#session-label"), "none");
      const session = await newSession(page);
      await send(page, "hello acme");
      await newestRun(page, "completed");
      await idle(page);
      const mine = await server.fetch(`/v1/sessions/${session}`, { tenant: "acme" });
      assert.equal(mine.status, 200);
      await mine.body?.cancel();
      const other = await server.fetch(`/v1/sessions/${session}`);
      assert.equal(other.status, 404);
      await other.body?.cancel();
      await page.fill("#tenant", "");
      await page.press("#tenant", "Tab");
      await page.waitForFunction(() => document.querySelectorAll(".session-item").length === 7);
      await page.click("#connection-panel summary");
    });

    await t.step("fits a smaller laptop screen", async () => {
      // Back in the default tenant: open the newest session and make one more run.
      await page.locator(".session-item").first().click();
      await page.locator('.toolcall[data-tool="deploy"]').first().waitFor();
      await send(page, '/call progress {"task": "overview", "steps": 3}');
      await newestRun(page, "completed");
      await idle(page);
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.click("#log-panel summary");
      assert.ok(await page.locator("#events li").count() > 0);
      // Nothing overflows the page sideways: each column scrolls on its own.
      const overflow = await page.evaluate(() =>
        document.documentElement.scrollWidth - document.documentElement.clientWidth
      );
      assert.equal(overflow, 0);
      await screenshot(page, "overview_1280");
    });

    assert.deepEqual(problems, []);
    // The runs the page made really happened, through the public API.
    const res = await server.fetch("/v1/sessions");
    assert.equal((await res.json()).count, 7);
  },
});

slowTest({
  name: "playground: a fresh page runs a tool first, shows this agent's tools, titles sessions",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await requireChromium();
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const quickstart = await loadConfig(QUICKSTART, {});
    await using dir = await tempDir();
    await dir.write({
      "tools/math.js": "export function add({ a, b }) {\n  return a + b;\n}\n" +
        "export function shout({ text }) {\n  return String(text).toUpperCase();\n}\n",
    });
    const math = dir.join("tools", "math.js");
    const number = { type: "number" };
    await using server = await startTestServer({
      manifest: {
        agent: { name: "calculator", description: "Adds numbers.", model: { provider: "echo" } },
        tool: {
          progress: quickstart.manifest.tool.progress,
          add: {
            kind: "javascript",
            module: math,
            function: "add",
            description: "Adds a and b.",
            parameters: {
              type: "object",
              properties: { a: number, b: number },
              required: ["a", "b"],
            },
          },
          shout: { kind: "javascript", module: math, function: "shout" },
        },
      },
    });
    const problems: string[] = [];
    await using browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } }))
      .newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));

    // A fresh page: no session picked, no "New session" clicked.
    await page.goto(server.url + "/");
    await page.locator("body[data-ready=true]").waitFor();
    assert.equal(await textOf(page, "#session-label"), "none");

    // The agent panel and the suggestions are this agent's.
    assert.equal(await textOf(page, "#agent-name"), "calculator");
    assert.equal(await textOf(page, "#agent-model"), "echo / echo");
    const tools = await page.locator("#agent-tools .agent-tool").evaluateAll((els) =>
      els.map((el) => (el as HTMLElement).dataset.tool)
    );
    assert.deepEqual(tools, ["progress", "add", "shout"]);
    assert.match(await textOf(page, '#agent-tools [data-tool="add"] pre'), /"required"/);
    const chips = await page.locator("#suggestions .chip").allTextContents();
    assert.deepEqual(chips, ["progress", "add", "shout"]);
    assert.equal(await page.isChecked("#client-tool"), false);

    // The first thing done on the page is a tool run with progress and state.
    await useEcho(page, 10);
    await send(page, '/call progress {"steps": 3}');
    await newestRun(page, "completed");
    await idle(page);
    assert.ok(await page.locator("#banner").isHidden(), await textOf(page, "#banner-text"));
    assert.deepEqual(JSON.parse(await textOf(page, "#state")), {
      counter: 1,
      last_task: "something",
    });
    assert.match(await textOf(page, "#customs"), /progress/);
    assert.doesNotMatch(await textOf(page, "#customs"), /None yet/);

    // A suggestion fills a call of the agent's own tool, which runs.
    await page.locator("#suggestions .chip", { hasText: "add" }).click();
    assert.equal(await page.inputValue("#message"), '/call add {"a":3,"b":3}');
    await page.click("#send");
    await newestRun(page, "completed");
    await idle(page);
    assert.match(await lastAgentText(page), /add returned: 6/);
    await screenshot(page, "fresh_agent_panel");

    // State history: fork from the checkpoint where counter was 1, twice over.
    await send(page, '/call progress {"steps": 2}');
    await newestRun(page, "completed");
    await idle(page);
    assert.equal(JSON.parse(await textOf(page, "#state")).counter, 2);
    const atOne = page.locator("#checkpoints .checkpoint", { hasText: '"counter":1' }).first();
    await atOne.waitFor();
    const forkId = (await atOne.getAttribute("data-checkpoint-id"))!;
    await atOne.locator("button.fork").click();
    assert.equal(await atOne.getAttribute("data-fork"), "true");
    assert.ok(await page.locator("#fork-note").isVisible());
    await send(page, '/call progress {"steps": 2}');
    const forked = await newestRun(page, "completed");
    await idle(page);
    // From counter 1, not from the latest (2): the fork's state, and the run says where it began.
    assert.equal(JSON.parse(await textOf(page, "#state")).counter, 2);
    const record = await runRecord(server, forked);
    assert.ok(record.parent_checkpoint_id, "the forked run names the checkpoint it began from");
    const parent = await (await server.fetch(
      `/v1/sessions/${record.session_id}/checkpoints/${record.parent_checkpoint_id}`,
    )).json();
    assert.equal(parent.state.context.counter, 1, `forked from ${forkId}`);
    assert.ok(await page.locator("#fork-note").isHidden(), "a fork is used once");
    await screenshot(page, "fresh_history");

    // Edit the state, then run: the run starts from the edited state.
    await page.click("#state-edit-toggle");
    assert.equal(JSON.parse(await page.inputValue("#state-edit")).counter, 2);
    await page.fill("#state-edit", '{"counter": 10}');
    await send(page, '/call progress {"steps": 2}');
    await newestRun(page, "completed");
    await idle(page);
    assert.equal(JSON.parse(await textOf(page, "#state")).counter, 11);
    assert.ok(await page.locator("#state-edit-box").isHidden(), "an edit is used once");

    // A finished run unfolds into its steps: timings, finish reasons and tokens, tool calls.
    const steps = page.locator(`#runs .run[data-run-id="${forked}"] .run-steps`);
    await steps.waitFor();
    await steps.locator("> summary").click();
    assert.match(
      await steps.locator("> summary").textContent() ?? "",
      /s · 2 model steps · in \d+/,
    );
    await steps.locator(".run-step").first().waitFor();
    // Its steps: model, tools, model (and a tools step first when it answers calls left open).
    const stepLines = await steps.locator(".run-step .step-head").allTextContents();
    const time = "[\\d.]+ m?s";
    const model = stepLines.filter((line) => / · model · /.test(line));
    assert.equal(model.length, 2, stepLines.join("\n"));
    assert.match(
      model[0],
      new RegExp(
        `^step \\d+ · model · ${time} · first token ${time} · tool_calls · in \\d+ / out \\d+ tokens$`,
      ),
    );
    assert.match(
      model[1],
      new RegExp(`^step \\d+ · model · .* · stop · in \\d+ / out \\d+ tokens$`),
    );
    const toolSteps = stepLines.filter((line) => !/ · model · /.test(line));
    assert.ok(toolSteps.length >= 1, stepLines.join("\n"));
    for (const line of toolSteps) assert.match(line, new RegExp(`^step \\d+ · tools · ${time}$`));

    // Sessions are titled by their first message, found by search, and deleted.
    const first = await textOf(page, "#session-label");
    await page.locator(`.session-item[data-session-id="${first}"] .title`).filter({
      hasText: '/call progress {"steps": 3}',
    }).waitFor();
    const second = await newSession(page);
    await send(page, "hello there");
    await newestRun(page, "completed");
    await idle(page);
    await page.locator(`.session-item[data-session-id="${second}"] .title`).filter({
      hasText: "hello there",
    }).waitFor();
    assert.equal(await page.locator(".session-item").count(), 2);
    await page.fill("#session-search", "HELLO");
    assert.deepEqual(
      await page.locator(".session-item").evaluateAll((els) =>
        els.map((el) => (el as HTMLElement).dataset.sessionId)
      ),
      [second],
    );
    await page.fill("#session-search", "nothing like it");
    assert.match(await textOf(page, "#sessions"), /No session matches/);
    await page.fill("#session-search", "");
    await page.click(`.session-delete[data-session-id="${second}"]`);
    await page.waitForFunction(() => document.querySelectorAll(".session-item").length === 1);
    assert.equal(await textOf(page, "#session-label"), "none");
    const gone = await server.fetch(`/v1/sessions/${second}`);
    await gone.body?.cancel();
    assert.equal(gone.status, 404);
    assert.equal((await (await server.fetch("/v1/sessions")).json()).count, 1);
    await screenshot(page, "fresh_sessions");
    assert.deepEqual(problems, []);
  },
});
