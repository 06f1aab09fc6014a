/**
 * A real `useChat` page (`@ai-sdk/react`, built with Vite from page/) in Chromium, served from
 * another origin than agentd: send a message and see the answer stream in, approve a tool call,
 * reload mid-answer and see the answer finish (`resume: true`). The page's dependencies are pinned
 * in page/package.json and page/deno.lock; the test installs them into a temporary copy (from
 * Deno's npm cache after the first run) and builds it there.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchChromium, slowTest, startTestServer, tempDir } from "../../_kit/mod.ts";
import { APPROVAL_TOOL } from "../ag_ui/helpers.ts";

const PAGE = new URL("./page/", import.meta.url);

/** Runs `deno <args>` in `cwd`, failing the test with its output when it fails. */
async function deno(cwd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, `deno ${args.join(" ")}: ${text.slice(-3000)}`);
}

/** Copies the page project into `dir`, installs its pinned dependencies and builds it. */
async function buildPage(dir: string): Promise<string> {
  for (const name of ["package.json", "deno.lock", "index.html", "src/main.js"]) {
    await Deno.mkdir(`${dir}/src`, { recursive: true });
    await Deno.copyFile(new URL(name, PAGE), `${dir}/${name}`);
  }
  // A project of its own, with a node_modules folder for Vite.
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ nodeModulesDir: "auto" }));
  await deno(dir, ["install", "--frozen"]);
  await deno(dir, ["run", "-A", "--frozen", "npm:vite@8.3.8", "build", "--base", "./"]);
  return `${dir}/dist`;
}

/** A static file server for the built page, on its own origin. */
function servePage(root: string): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const file = path === "/" ? "/index.html" : path;
    if (file.includes("..")) return new Response("no", { status: 400 });
    try {
      const body = await Deno.readFile(`${root}${file}`);
      const type = file.endsWith(".js") ? "text/javascript" : "text/html; charset=utf-8";
      return new Response(body, { headers: { "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
}

/** Page-side: the text of the chat's last assistant message (the page's code runs as text). */
const LAST_ANSWER =
  `([...document.querySelectorAll("#messages li.assistant")].at(-1)?.textContent ?? "")`;

/** Page-side: the chat's status. */
const STATUS = `document.querySelector("main")?.dataset.status`;

/** The text of the chat's last assistant message. */
function lastAnswer(tab: Page): Promise<string> {
  return tab.evaluate(LAST_ANSWER);
}

async function send(tab: Page, text: string): Promise<void> {
  await tab.fill("#input", text);
  await tab.click("#send");
}

/** Waits until the page is idle and its last answer matches. */
async function answered(tab: Page, pattern: RegExp): Promise<string> {
  await tab.waitForFunction(
    `${STATUS} === "ready" && new RegExp(${JSON.stringify(pattern.source)}).test(${LAST_ANSWER})`,
    undefined,
    { timeout: 20_000 },
  );
  return await lastAnswer(tab);
}

slowTest({
  name: "AI SDK add-on: a useChat page (Vite, @ai-sdk/react) in Chromium",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using dir = await tempDir("agentd_use_chat_page");
  const dist = await buildPage(dir.path);
  const app = servePage(dist);
  const origin = `http://127.0.0.1:${app.addr.port}`;
  try {
    await using t = await startTestServer({
      manifest: {
        // Paced, so a reload lands mid-answer.
        agent: {
          name: "use-chat",
          model: { provider: "echo", inference_params: { provider_params: { delay_ms: 60 } } },
        },
        tool: {
          delete_file: APPROVAL_TOOL,
        },
        http_server: { cors: { allow_origins: [origin] }, protocol: { ai_sdk: {} } },
      },
    });
    await using browser = await launchChromium();
    const tab = await browser.newPage();
    const problems: string[] = [];
    tab.on("pageerror", (e) => problems.push(String(e)));
    const chat = crypto.randomUUID();
    await tab.goto(`${origin}/?agentd=${encodeURIComponent(t.url)}&chat=${chat}`);
    await tab.waitForSelector("main[data-status=ready]");

    // Send, and see the answer stream in: a part of it shows before all of it.
    const words = "one two three four five six seven eight nine ten";
    await send(tab, words);
    await tab.waitForFunction(`${STATUS} === "streaming" && ${LAST_ANSWER} !== ""`);
    assert.equal(await answered(tab, /ten$/), words);

    // Approve a tool call.
    await send(tab, '/call delete_file {"path": "/tmp/page"}');
    await tab.waitForSelector("button.approve", { timeout: 20_000 });
    await tab.click("button.approve");
    const approved = await answered(tab, /delete_file returned/);
    assert.match(approved, /delete_file: output-available/);
    assert.match(approved, /delete_file returned: \{"deleted":"\/tmp\/page"\}/);

    // Reload mid-answer: the page resumes the answer and sees it finish.
    const long = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi";
    await send(tab, long);
    await tab.waitForFunction(`/beta/.test(${LAST_ANSWER})`);
    const before = await lastAnswer(tab);
    assert.ok(!before.endsWith("xi"), `the reload comes mid-answer: ${before}`);
    await tab.reload();
    assert.equal(await answered(tab, /xi$/), long);
    const users = await tab.locator("#messages li.user").count();
    const answers = await tab.locator("#messages li.assistant").count();
    assert.deepEqual([users, answers], [3, 3], "one answer per message, none twice");
    assert.deepEqual(problems, []);
  } finally {
    await app.shutdown();
  }
});
