/**
 * Where a manifest problem is: `file:line:col` of the attribute or block a message is about, found
 * in the manifest's text from the message's subject (`agent.model.timeout: ...`, or `tool 'add':`
 * with the attribute it names). The search walks the path's names forward through the text
 * (`agent`, then `model` after it, then `timeout`), in HCL (`name =`, `name {`, `"label"`) and
 * JSON (`"name":`); a name that is not there (a missing attribute) leaves the place of its block.
 */

/** A 1-based line and column. */
export interface Place {
  line: number;
  col: number;
}

/** Prefixes `file:line:col: ` to each message whose subject is found in `text`. */
export function locateMessages(
  file: string,
  text: string,
  messages: readonly string[],
): string[] {
  return messages.map((message) => {
    // Already placed (syntax errors), or about the environment rather than the file.
    if (message.startsWith(`${file}:`) || /\(value from [A-Z0-9_]+\)/.test(message)) {
      return message;
    }
    const path = subjectPath(message);
    const place = path && locate(text, path);
    return place ? `${file}:${place.line}:${place.col}: ${message}` : message;
  });
}

/** The manifest path a message is about, or undefined when it names none. */
export function subjectPath(message: string): string[] | undefined {
  const tool = /^tool '([^']+)': (.*)$/.exec(message);
  if (tool) {
    const [, name, rest] = tool;
    const attribute = /^(?:function "|a python tool needs function|function )/.test(rest)
      ? "function"
      : /^permissions\.(\w+)/.exec(rest)?.[0] ??
        (/^sandbox /.test(rest) ? "sandbox" : /module/.test(rest) ? "module" : undefined);
    return ["tool", name, ...(attribute ? attribute.split(".") : [])];
  }
  const dotted = /^([A-Za-z_][\w-]*(?:\.[\w-]+)*): /.exec(message);
  if (!dotted) return undefined;
  // Array indexes (`tools.2`) name no text of their own.
  return dotted[1].split(".").filter((segment) => !/^\d+$/.test(segment));
}

/** The place of the deepest segment of `path` found in `text`, or undefined. */
export function locate(text: string, path: readonly string[]): Place | undefined {
  let from = 0;
  let found: number | undefined;
  for (const segment of path) {
    const at = findName(text, segment, from);
    if (at === undefined) break;
    found = at;
    from = at + segment.length;
  }
  return found === undefined ? undefined : placeOf(text, found);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The offset of `name` as an attribute, block type or label (HCL), or a key (JSON). */
function findName(text: string, name: string, from: number): number | undefined {
  const n = escape(name);
  const pattern = new RegExp(
    // HCL attribute or block (`name =`, `name {`, `name "label"`), at a line start or after `{`.
    `(?:^|[\\n{,])[ \\t]*(${n})[ \\t]*(?:=|\\{|")` +
      // A block label or a JSON key: `"name"` followed by `{` or `:`.
      `|"(${n})"[ \\t]*(?:\\{|:)`,
    "g",
  );
  pattern.lastIndex = from;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const offset = match.index + match[0].indexOf(match[1] ?? `"${match[2]}"`);
    if (isComment(text, offset)) continue;
    return offset;
  }
  return undefined;
}

/** Whether `offset` is inside a `#` or `//` comment of its line. */
function isComment(text: string, offset: number): boolean {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  return /^\s*(#|\/\/)/.test(before);
}

function placeOf(text: string, offset: number): Place {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const col = offset - (before.lastIndexOf("\n") + 1) + 1;
  return { line, col };
}
