/**
 * Translation of our request (system string, `Message[]`, tools, inference parameters) into the
 * AI SDK's provider-level call options (`LanguageModelV4CallOptions`).
 */
import type {
  JSONObject,
  JSONValue,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ReasoningPart,
  LanguageModelV4TextPart,
  LanguageModelV4ToolCallPart,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
  SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import type { Message, Part } from "../api/schemas.ts";
import type { InferenceParams } from "../config/schema/agent.ts";
import type { ModelRequest, ModelTool } from "./types.ts";

/** Options of the conversion that depend on the provider. */
export interface PromptOptions {
  /** Whether system messages may stay where they are after the conversation has begun. */
  inlineSystem: boolean;
}

/**
 * Renders one part as text: data parts become their JSON; reasoning is not text, and sources are
 * never sent back (the answer's text keeps what the model made of them).
 */
function partText(part: Part): string {
  if (part.type === "reasoning" || part.type === "source") return "";
  return part.type === "text" ? part.value : JSON.stringify(part.value ?? null);
}

/** Text parts of a message, leaving out empty ones (Anthropic rejects empty text blocks). */
function textParts(parts: Part[]): LanguageModelV4TextPart[] {
  return parts.map(partText).filter((t) => t !== "").map((text) => ({ type: "text", text }));
}

/**
 * An assistant message's content in order: reasoning with the provider metadata it came with
 * (Anthropic's signed thinking must precede its `tool_use`), then text. A reasoning part without
 * text or metadata has nothing to send back.
 */
function assistantParts(
  parts: Part[],
): Array<LanguageModelV4TextPart | LanguageModelV4ReasoningPart> {
  return parts.flatMap((part): Array<LanguageModelV4TextPart | LanguageModelV4ReasoningPart> => {
    if (part.type !== "reasoning") return textParts([part]);
    if (part.value === "" && !part.provider_metadata) return [];
    return [{
      type: "reasoning",
      text: part.value,
      ...(part.provider_metadata
        ? { providerOptions: part.provider_metadata as SharedV4ProviderOptions }
        : {}),
    }];
  });
}

/** The output of a tool message: a lone data part stays JSON, anything else is text. */
function toolOutput(parts: Part[]): LanguageModelV4ToolResultOutput {
  if (parts.length === 1 && parts[0].type === "data") {
    return { type: "json", value: (parts[0].value ?? null) as JSONValue };
  }
  return { type: "text", value: parts.map(partText).join("") };
}

/** Converts the system string and our messages to an AI SDK prompt. */
export function toPrompt(
  system: string,
  messages: Message[],
  options: PromptOptions,
): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (system !== "") prompt.push({ role: "system", content: system });
  // Tool results carry the tool's name in the AI SDK shape (Google needs it); ours only have the
  // call id, so remember the names the assistant used.
  const toolNames = new Map<string, string>();
  // Calls the provider ran itself are not sent back (their results are the provider's own
  // business; the answer's text keeps what the model said of them): docs/models.md.
  const providerRun = new Set<string>();
  let conversationStarted = false;
  for (const message of messages) {
    switch (message.role) {
      case "system": {
        const content = message.content.map(partText).join("");
        if (conversationStarted && !options.inlineSystem) {
          prompt.push({ role: "user", content: [{ type: "text", text: `[system] ${content}` }] });
        } else {
          prompt.push({ role: "system", content });
        }
        break;
      }
      case "user": {
        conversationStarted = true;
        const content = textParts(message.content);
        prompt.push({
          role: "user",
          content: content.length ? content : [{ type: "text", text: "" }],
        });
        break;
      }
      case "assistant": {
        conversationStarted = true;
        const content: Array<
          LanguageModelV4TextPart | LanguageModelV4ReasoningPart | LanguageModelV4ToolCallPart
        > = assistantParts(message.content);
        for (const call of message.tool_calls ?? []) {
          if (call.provider_executed) {
            providerRun.add(call.id);
            continue;
          }
          toolNames.set(call.id, call.name);
          content.push({
            type: "tool-call",
            toolCallId: call.id,
            toolName: call.name,
            input: call.arguments,
            ...(call.provider_metadata
              ? { providerOptions: call.provider_metadata as SharedV4ProviderOptions }
              : {}),
          });
        }
        if (content.length === 0) content.push({ type: "text", text: "" });
        prompt.push({ role: "assistant", content });
        break;
      }
      case "tool": {
        conversationStarted = true;
        const callId = message.tool_call_id ?? "";
        if (providerRun.has(callId)) break;
        const part: LanguageModelV4ToolResultPart = {
          type: "tool-result",
          toolCallId: callId,
          toolName: toolNames.get(callId) ?? "tool",
          output: toolOutput(message.content),
        };
        // Results of parallel calls belong together in one tool message (Anthropic and Google
        // expect all results of one assistant turn in one block).
        const last: LanguageModelV4Message | undefined = prompt[prompt.length - 1];
        if (last?.role === "tool") last.content.push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/** Converts our tools to AI SDK function tools. */
export function toTools(tools: ModelTool[]): LanguageModelV4FunctionTool[] {
  return tools.map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    inputSchema: t.parameters,
  }));
}

/** Maps our inference parameters onto AI SDK call options (null and absent both mean unset). */
export function inferenceOptions(
  params: InferenceParams,
  optionsKey: string,
): Partial<LanguageModelV4CallOptions> {
  const out: Partial<LanguageModelV4CallOptions> = {};
  if (params.max_tokens != null) out.maxOutputTokens = params.max_tokens;
  if (params.temperature != null) out.temperature = params.temperature;
  if (params.top_p != null) out.topP = params.top_p;
  if (params.top_k != null) out.topK = params.top_k;
  if (params.stop_sequences != null) out.stopSequences = params.stop_sequences;
  if (params.frequency_penalty != null) out.frequencyPenalty = params.frequency_penalty;
  if (params.presence_penalty != null) out.presencePenalty = params.presence_penalty;
  if (params.seed != null) out.seed = params.seed;
  if (params.provider_params != null) {
    out.providerOptions = { [optionsKey]: params.provider_params as JSONObject };
  }
  return out;
}

/** The complete call options of one model step. */
export function toCallOptions(
  request: ModelRequest,
  params: InferenceParams,
  provider: { optionsKey: string; inlineSystem: boolean },
  abortSignal: AbortSignal,
): LanguageModelV4CallOptions {
  const tools = toTools(request.tools);
  return {
    prompt: toPrompt(request.system, request.messages, provider),
    ...inferenceOptions(params, provider.optionsKey),
    ...(tools.length ? { tools, toolChoice: { type: "auto" } } : {}),
    abortSignal,
  };
}
