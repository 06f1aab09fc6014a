/**
 * The built-in offline `echo` provider: a real `LanguageModelV4`, so it runs through exactly the
 * same client path (prompt conversion, event mapping, abort) as the HTTP providers.
 *
 * - It streams the last user message back word by word (a word and its following whitespace per
 *   text delta).
 * - Lines `/call TOOL {json}` of the last user message become tool calls (JSON optional, default
 *   `{}`); other lines of that message are streamed as text first.
 * - When the conversation ends with tool results it answers `TOOL returned: <result>`, one line per
 *   result, so a ReAct loop ends.
 * - `provider_params: { delay_ms }` waits that long between deltas (demos and tests).
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";

/** The only model name of the echo provider. */
export const ECHO_MODEL = "echo";

/** What the echo model decided to answer. */
interface EchoPlan {
  text: string;
  calls: { id: string; name: string; input: string }[];
}

const CALL_LINE = /^\/call\s+([A-Za-z0-9_\-]+)\s*(.*)$/;

/** Splits text into words each carrying its following whitespace; joined, they give the text. */
export function echoTokens(text: string): string[] {
  const tokens: string[] = text.match(/\S+\s*/g) ?? [];
  const lead = text.match(/^\s+/)?.[0] ?? "";
  if (lead) {
    if (tokens.length) tokens[0] = lead + tokens[0];
    else tokens.push(lead);
  }
  return tokens;
}

/** Renders a tool result for the echo answer: JSON values as JSON, text as is. */
function renderOutput(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    default:
      return JSON.stringify(output);
  }
}

let callCounter = 0;

/** A tool call id unique within the process (providers' ids look alike). */
function nextCallId(): string {
  callCounter = (callCounter + 1) % 1_000_000_000;
  return `call_echo_${Date.now().toString(36)}_${callCounter.toString(36)}`;
}

/** Decides the echo answer from the prompt. */
export function planEcho(prompt: LanguageModelV4Prompt): EchoPlan {
  const last = prompt[prompt.length - 1];
  if (last?.role === "tool") {
    const lines = last.content.flatMap((part) =>
      part.type === "tool-result" ? [`${part.toolName} returned: ${renderOutput(part.output)}`] : []
    );
    return { text: lines.join("\n"), calls: [] };
  }
  let lastUser = "";
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message.role === "user") {
      lastUser = message.content.map((p) => p.type === "text" ? p.text : "").join("");
      break;
    }
  }
  const lines = lastUser.split("\n");
  if (!lines.some((line) => CALL_LINE.test(line.trim()))) return { text: lastUser, calls: [] };
  const textLines: string[] = [];
  const calls: EchoPlan["calls"] = [];
  for (const line of lines) {
    const match = CALL_LINE.exec(line.trim());
    if (!match) {
      if (line.trim() !== "") textLines.push(line);
      continue;
    }
    const [, name, rawArgs] = match;
    const json = rawArgs.trim() === "" ? "{}" : rawArgs.trim();
    let args: unknown;
    try {
      args = JSON.parse(json);
    } catch (e) {
      // A typo in a demo should not fail the run: say what is wrong instead of calling.
      return {
        text: `cannot parse /call arguments of ${name}: ${(e as Error).message}`,
        calls: [],
      };
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      return { text: `/call arguments of ${name} must be a JSON object`, calls: [] };
    }
    calls.push({ id: nextCallId(), name, input: JSON.stringify(args) });
  }
  return { text: textLines.length ? textLines.join("\n") + "\n" : "", calls };
}

/** Splits a JSON string in about three pieces, as providers stream tool arguments. */
function jsonChunks(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / 3));
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += size) chunks.push(json.slice(i, i + size));
  return chunks;
}

/** Rough word counts, so usage is not empty. */
function usage(prompt: LanguageModelV4Prompt, outputTokens: number): LanguageModelV4Usage {
  const words = JSON.stringify(prompt).split(/\s+/).length;
  return {
    inputTokens: { total: words, noCache: words, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
  };
}

/** The stream parts of an echo answer, in order. */
function planParts(plan: EchoPlan, prompt: LanguageModelV4Prompt): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
  const tokens = echoTokens(plan.text);
  if (tokens.length) {
    parts.push({ type: "text-start", id: "0" });
    for (const delta of tokens) parts.push({ type: "text-delta", id: "0", delta });
    parts.push({ type: "text-end", id: "0" });
  }
  for (const call of plan.calls) {
    parts.push({ type: "tool-input-start", id: call.id, toolName: call.name });
    for (const delta of jsonChunks(call.input)) {
      parts.push({ type: "tool-input-delta", id: call.id, delta });
    }
    parts.push({ type: "tool-input-end", id: call.id });
    parts.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.input });
  }
  const reason = plan.calls.length ? "tool-calls" : "stop";
  parts.push({
    type: "finish",
    finishReason: { unified: reason, raw: reason },
    usage: usage(prompt, tokens.length + plan.calls.length),
  });
  return parts;
}

/** Milliseconds between deltas from `provider_params.delay_ms` (0 when absent or invalid). */
function delayOf(options: LanguageModelV4CallOptions): number {
  const delay = options.providerOptions?.echo?.delay_ms;
  return typeof delay === "number" && Number.isFinite(delay) && delay > 0 ? delay : 0;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Creates the echo language model. */
export function createEchoModel(modelId: string = ECHO_MODEL): LanguageModelV4 {
  const model: LanguageModelV4 = {
    specificationVersion: "v4",
    provider: "echo",
    modelId,
    supportedUrls: {},
    doStream(options) {
      const parts = planParts(planEcho(options.prompt), options.prompt);
      const delay = delayOf(options);
      const signal = options.abortSignal;
      let index = 0;
      let deltas = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          const part = parts[index++];
          if (part === undefined) return controller.close();
          // Delay before every delta after the first one, like tokens arriving over time.
          if (part.type === "text-delta" || part.type === "tool-input-delta") {
            if (delay && deltas > 0) await wait(delay, signal);
            deltas++;
          }
          if (signal?.aborted) throw signal.reason;
          controller.enqueue(part);
        },
      }, { highWaterMark: 0 });
      return Promise.resolve({ stream });
    },
    async doGenerate(options) {
      const content: LanguageModelV4Content[] = [];
      const plan = planEcho(options.prompt);
      if (plan.text) content.push({ type: "text", text: plan.text });
      for (const c of plan.calls) {
        content.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: c.input });
      }
      const reason = plan.calls.length ? "tool-calls" : "stop";
      await Promise.resolve();
      return {
        content,
        finishReason: { unified: reason, raw: reason },
        usage: usage(options.prompt, echoTokens(plan.text).length + plan.calls.length),
        warnings: [],
      };
    },
  };
  return model;
}
