/// <reference lib="dom" />
/**
 * The playground as a studio, in headless Chromium against a real server and an OpenAI-compatible
 * provider (a local fake speaking its wire format): the model's reasoning shows collapsed in the
 * conversation, live and after a reload; usage and cost show per run and per session; a run
 * unfolds into its steps with their timings, the model request as the provider received it (the
 * manifest's secret masked in the system prompt and the Authorization header), and the tool
 * call's input, output and duration. A screenshot goes to tests/artifacts/ (git-ignored).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { launchChromium, slowTest, startTestServer, tempDir } from "../_kit/mod.ts";
import { chunk, startFakeOpenAI, tail, text } from "../models/fake_openai.ts";

const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));
const SECRET = "sk-studio-secret-0123456789";
const MODEL = "fake-reasoner";

/** The text of the first element of `selector` ("" when none). */
async function textOf(page: Page, selector: string): Promise<string> {
  const el = page.locator(selector);
  return (await el.count()) > 0 ? (await el.first().textContent()) ?? "" : "";
}

/** The fake provider's first answer: reasoning, then a call of `add`. */
const reasonThenCall = {
  kind: "sse" as const,
  frames: [
    chunk({ role: "assistant", content: null, reasoning_content: "" }),
    chunk({ reasoning_content: "I should add" }),
    chunk({ reasoning_content: " the two numbers." }),
    chunk({
      tool_calls: [{
        index: 0,
        id: "call_add",
        type: "function",
        function: { name: "add", arguments: '{"a": 2, "b": 3}' },
      }],
    }),
    ...tail("tool_calls"),
  ],
};

slowTest({
  name: "playground: reasoning collapsed, usage and cost, a run's steps with its model request",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await using fake = startFakeOpenAI();
    fake.enqueue(reasonThenCall, text(["The sum", " is 5."]));
    await using dir = await tempDir();
    await dir.write({ "math.js": "export function add({ a, b }) {\n  return a + b;\n}\n" });
    await using server = await startTestServer({
      manifest: {
        agent: {
          name: "studio",
          instructions: `Use the key ${SECRET} for tickets.`,
          model: {
            provider: "openai-compatible",
            model: MODEL,
            base_url: fake.url,
            api_key: SECRET,
            prices: { [MODEL]: { input_per_mtok: 2, output_per_mtok: 8 } },
          },
        },
        tool: { add: { kind: "javascript", module: dir.join("math.js"), function: "add" } },
        runtime: { record_model_requests: true },
      },
    });
    await using browser = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 1000 } }))
      .newPage();
    page.setDefaultTimeout(20_000);
    const problems: string[] = [];
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));

    await page.goto(server.url + "/");
    await page.locator("body[data-ready=true]").waitFor();
    await page.fill("#message", "add 2 and 3");
    await page.click("#send");
    await page.waitForFunction(() =>
      document.querySelector<HTMLElement>("#runs .run")?.dataset.status === "completed"
    );
    await page.waitForFunction(() => document.getElementById("status")!.dataset.kind !== "busy");

    // The reasoning is there, collapsed, above the answer it led to.
    const reasoning = page.locator(".msg.assistant details.reasoning");
    await reasoning.first().waitFor();
    assert.equal(await reasoning.count(), 1);
    assert.equal(await reasoning.evaluate((el) => (el as HTMLDetailsElement).open), false);
    assert.equal(await textOf(page, "details.reasoning > summary"), "Reasoning · 6 words");
    assert.equal(
      await textOf(page, "details.reasoning .reasoning-text"),
      "I should add the two numbers.",
    );
    assert.ok(await page.locator("details.reasoning .reasoning-text").isHidden());

    // Usage and cost: 2 requests of 11 input and 7 output tokens, at 2 and 8 per million.
    const usage = "in 22 / out 14 tokens · cost 0.000156";
    await page.locator("#session-usage").filter({ hasText: usage }).waitFor();
    assert.equal(await textOf(page, "#session-usage"), `Session: ${usage}`);
    const run = page.locator("#runs .run").first();
    const summary = run.locator(".run-steps > summary");
    assert.match(await summary.textContent() ?? "", new RegExp(`s · 2 model steps · ${usage}$`));

    // The run's steps: timings, the model request as the provider received it, the tool call.
    await summary.click();
    await run.locator(".run-steps[data-loaded=true]").waitFor();
    const heads = await run.locator(".run-step .step-head").allTextContents();
    const time = "[\\d.]+ m?s";
    assert.equal(heads.length, 3, heads.join("\n"));
    assert.match(
      heads[0],
      new RegExp(
        `^step 1 · model · ${time} · first token ${time} · tool_calls · in 11 / out 7 tokens · cost 0.000078$`,
      ),
    );
    assert.match(heads[1], new RegExp(`^step 2 · tools · ${time}$`));
    assert.match(heads[2], new RegExp(`^step 3 · model · .* · stop · in 11 / out 7 tokens`));

    const request = run.locator('.run-step[data-step="1"] .model-request');
    assert.equal(await request.evaluate((el) => (el as HTMLDetailsElement).open), false);
    await request.locator("summary").click();
    assert.match(
      await request.locator("summary").textContent() ?? "",
      /^Model request · \d+ bytes$/,
    );
    assert.equal(
      await request.locator(".request-url").textContent(),
      `POST ${fake.url}/chat/completions`,
    );
    const headers = JSON.parse(await request.locator(".request-headers").textContent() ?? "{}");
    assert.equal(headers.authorization, "****");
    const body = JSON.parse(await request.locator(".request-body").textContent() ?? "{}");
    // Exactly what the provider received, the secret masked.
    const received = JSON.parse(
      JSON.stringify(fake.requests[0].body).replaceAll(SECRET, "[redacted]"),
    );
    assert.deepEqual(body, received);
    assert.equal(body.model, MODEL);
    assert.equal(body.messages[0].content, "Use the key [redacted] for tickets.");
    assert.deepEqual(body.tools.map((t: { function: { name: string } }) => t.function.name), [
      "add",
    ]);

    const call = run.locator('.run-step[data-step="2"] .tool-trace[data-tool="add"]');
    assert.match(await call.locator(".tool-trace-head").textContent() ?? "", /^add · [\d.]+ m?s$/);
    assert.deepEqual(JSON.parse(await call.locator(".tool-args").textContent() ?? ""), {
      a: 2,
      b: 3,
    });
    assert.equal(await call.locator(".tool-result").textContent(), "5");
    assert.ok(!(await page.content()).includes(SECRET), "the secret never reaches the page");
    await page.screenshot({ path: `${ARTIFACTS}playground_studio_steps.png`, fullPage: true });

    // The same steps in the wide view, where a request is easier to read.
    await run.locator(".run-wide").click();
    const dialog = page.locator("#run-dialog[open]");
    await dialog.waitFor();
    assert.deepEqual(await dialog.locator(".run-step .step-head").allTextContents(), heads);
    await dialog.locator('.run-step[data-step="1"] .model-request summary').click();
    assert.deepEqual(
      JSON.parse(await dialog.locator(".request-body").first().textContent() ?? "{}"),
      received,
    );
    await page.screenshot({ path: `${ARTIFACTS}playground_studio_wide.png` });
    await page.click("#run-dialog-close");
    await page.locator("#run-dialog").waitFor({ state: "hidden" });

    // After a reload, the stored reasoning is drawn collapsed again.
    await page.reload();
    await page.locator("body[data-ready=true]").waitFor();
    await page.locator(".msg.assistant details.reasoning").first().waitFor();
    assert.equal(await textOf(page, "details.reasoning > summary"), "Reasoning · 6 words");
    assert.equal(
      await page.locator("details.reasoning").evaluate((el) => (el as HTMLDetailsElement).open),
      false,
    );
    assert.equal(await textOf(page, "#session-usage"), `Session: ${usage}`);
    assert.deepEqual(problems, []);
  },
});
