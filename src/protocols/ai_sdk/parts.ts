/**
 * Small mappers of the AI SDK encoder (encoder.ts): a source as its UI message chunk, a tool
 * call's parsed input, an error result's text and the provider-executed flag of a call's parts.
 */
import type { UIMessageChunk } from "ai";
import type { RunEventOf } from "../../api/events.ts";

/**
 * A source as the UI stream's `source-url` (a page) or `source-document` part; a citation's
 * passage rides `providerMetadata.agentd.citedText`.
 */
export function sourceChunk(event: RunEventOf<"source">): UIMessageChunk {
  const meta = event.cited_text !== undefined
    ? { providerMetadata: { agentd: { citedText: event.cited_text } } }
    : {};
  const title = event.title !== undefined ? { title: event.title } : {};
  if (event.source_type === "url") {
    return {
      type: "source-url",
      sourceId: event.source_id,
      url: event.url ?? "",
      ...title,
      ...meta,
    };
  }
  return {
    type: "source-document",
    sourceId: event.source_id,
    mediaType: event.media_type ?? "application/octet-stream",
    title: event.title ?? event.filename ?? event.source_id,
    ...(event.filename !== undefined ? { filename: event.filename } : {}),
    ...meta,
  };
}

/** `providerExecuted: true` for a call the provider runs, nothing otherwise. */
export function providerExecuted(provider: boolean): { providerExecuted?: true } {
  return provider ? { providerExecuted: true } : {};
}

/** A call's input: the JSON object its text holds (`{}` for none), or undefined. */
export function parseInput(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return {};
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** An error result as text: its `error` field when it has one, else the JSON. */
export function errorText(content: unknown): string {
  if (typeof content === "string") return content;
  const error = (content as { error?: unknown } | null)?.error;
  if (typeof error === "string") return error;
  return JSON.stringify(content ?? null);
}
