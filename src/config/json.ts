/**
 * JSON manifests: text -> the raw object tree, with a syntax error located as `file:line:col`
 * even where V8's message gives no position.
 */
import { ConfigError } from "./errors.ts";

/** Parses JSON text; a syntax error is a `ConfigError` naming its line and column. */
export function parseJson(text: string, filename: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const found = locateJsonError(text);
    const offset = found?.offset ?? jsonErrorOffset(error, text);
    const { line, col } = lineCol(text, offset);
    const what = found?.message ?? (error instanceof Error ? error.message : String(error));
    throw new ConfigError([`${filename}:${line}:${col}: invalid JSON: ${what}`]);
  }
}

function jsonErrorOffset(error: unknown, text: string): number {
  const m = /position (\d+)/.exec(error instanceof Error ? error.message : "");
  return m ? Number(m[1]) : text.length;
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, col: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

/**
 * A minimal JSON grammar walk that finds where `JSON.parse` failed: V8 omits the position for some
 * errors (`Unexpected token '}'`), and users need a line and column.
 */
function locateJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string): never => {
    throw { offset: i, message };
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const describe = () =>
    i >= text.length ? "unexpected end of input" : `unexpected ${JSON.stringify(text[i])}`;
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("invalid \\u escape");
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? "")) fail("invalid escape sequence");
      } else if (text.charCodeAt(i) < 0x20) fail("control character in string");
      i++;
    }
    if (i >= text.length) fail("unterminated string");
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`${describe()}, expected a double-quoted property name`);
        string();
        ws();
        if (text[i] !== ":") fail(`${describe()}, expected ':'`);
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else fail(`${describe()}, expected ',' or '}'`);
      }
    } else if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else fail(`${describe()}, expected ',' or ']'`);
      }
    } else if (c === '"') string();
    else {
      const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
        text.slice(i),
      );
      if (!m) fail(`${describe()}, expected a value`);
      else i += m[0].length;
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`${describe()} after the end of the document`);
  } catch (found) {
    if (typeof found === "object" && found !== null && "offset" in found) {
      return found as { offset: number; message: string };
    }
  }
  return undefined;
}
