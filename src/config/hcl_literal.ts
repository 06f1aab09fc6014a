/**
 * A parser of the literal subset of HCL that manifests are written in (blocks, attributes,
 * strings, heredocs, numbers, booleans, null, lists, objects, comments, `${env.NAME}`), giving
 * exactly the tree `@cdktn/hcl2json` gives for it. It exists for start-up time: hcl2json is a Go
 * program compiled to WebAssembly that costs ~0.4 s of CPU to load, most of a cold start.
 *
 * It answers `undefined` for anything outside the subset, and for every mistake: the caller then
 * asks hcl2json, whose tree and diagnostics stay the reference (tests/config/hcl_literal_test.ts
 * holds the two to the same tree on every manifest of the repository).
 */

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
type Body = Record<string, Value>;

/** Thrown inside the parser for anything it does not take; caught at the top. */
class Outside extends Error {}

const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ENV_REF = /^env\.[A-Za-z_][A-Za-z0-9_]*$/;

/** The tree of `text`, or undefined when it is not in the subset (or not valid HCL). */
export function parseHclLiteral(text: string): unknown {
  try {
    return new Parser(text).body(false);
  } catch (error) {
    if (error instanceof Outside) return undefined;
    throw error;
  }
}

class Parser {
  #pos = 0;
  constructor(readonly text: string) {}

  /** Spaces, tabs and comments on this line; `newlines` also crosses line ends. */
  #skip(newlines: boolean): boolean {
    const t = this.text;
    let crossed = false;
    while (this.#pos < t.length) {
      const c = t[this.#pos];
      if (c === " " || c === "\t" || c === "\r") this.#pos++;
      else if (c === "\n") {
        if (!newlines) break;
        crossed = true;
        this.#pos++;
      } else if (c === "#" || (c === "/" && t[this.#pos + 1] === "/")) {
        while (this.#pos < t.length && t[this.#pos] !== "\n") this.#pos++;
      } else if (c === "/" && t[this.#pos + 1] === "*") {
        const end = t.indexOf("*/", this.#pos + 2);
        if (end < 0) throw new Outside();
        if (t.slice(this.#pos, end).includes("\n")) crossed = true;
        if (crossed && !newlines) throw new Outside();
        this.#pos = end + 2;
      } else break;
    }
    return crossed;
  }

  #peek(): string | undefined {
    return this.text[this.#pos];
  }

  #expect(c: string) {
    if (this.text[this.#pos] !== c) throw new Outside();
    this.#pos++;
  }

  #ident(): string | undefined {
    IDENT.lastIndex = this.#pos;
    const m = IDENT.exec(this.text);
    if (!m) return undefined;
    this.#pos += m[0].length;
    return m[0];
  }

  /** A body: `name = value` lines and blocks, up to `}` (inner) or the end of the text. */
  body(inner: boolean): Body {
    const out: Body = {};
    const attributes = new Set<string>();
    const blocks = new Set<string>();
    for (;;) {
      this.#skip(true);
      const c = this.#peek();
      if (c === undefined) {
        if (inner) throw new Outside();
        return out;
      }
      if (c === "}") {
        if (!inner) throw new Outside();
        return out;
      }
      const name = this.#ident();
      if (name === undefined) throw new Outside();
      this.#skip(false);
      if (this.#peek() === "=") {
        this.#pos++;
        if (attributes.has(name) || blocks.has(name)) throw new Outside();
        attributes.add(name);
        this.#skip(false);
        out[name] = this.#value();
      } else {
        if (attributes.has(name)) throw new Outside();
        blocks.add(name);
        this.#block(out, name);
      }
      // Each item ends its line (a closing brace on it is an error in HCL).
      const crossed = this.#skip(false);
      const next = this.#peek();
      if (!crossed && next !== "\n" && next !== undefined) throw new Outside();
    }
  }

  /** `name label... { body }`, added to `out` in hcl2json's shape. */
  #block(out: Body, name: string) {
    const labels: string[] = [];
    while (this.#peek() !== "{") {
      const c = this.#peek();
      if (c === '"') labels.push(this.#quoted(false));
      else {
        const label = this.#ident();
        if (label === undefined) throw new Outside();
        labels.push(label);
      }
      this.#skip(false);
    }
    this.#pos++;
    this.#skip(false);
    const oneLine = this.#peek() !== "\n";
    let body: Body;
    if (oneLine) {
      // `name { }` or `name { key = value }` on one line: HCL allows no more there.
      if (this.#peek() === "}") body = {};
      else {
        const key = this.#ident();
        if (key === undefined) throw new Outside();
        this.#skip(false);
        this.#expect("=");
        this.#skip(false);
        body = { [key]: this.#value() };
        this.#skip(false);
        if (this.#peek() !== "}") throw new Outside();
      }
    } else body = this.body(true);
    this.#expect("}");
    // Unlabeled: a list of bodies; labeled: nested objects by label, the list at the end.
    if (labels.length === 0) {
      const list = (out[name] ??= []) as Value[];
      if (!Array.isArray(list)) throw new Outside();
      list.push(body);
      return;
    }
    let node = (out[name] ??= {}) as Record<string, Value>;
    if (Array.isArray(node) || typeof node !== "object" || node === null) throw new Outside();
    for (const label of labels.slice(0, -1)) {
      const next = (node[label] ??= {}) as Record<string, Value>;
      if (Array.isArray(next)) throw new Outside();
      node = next;
    }
    const last = labels.at(-1)!;
    if (last in node) throw new Outside();
    node[last] = [body];
  }

  #value(): Value {
    const c = this.#peek();
    if (c === '"') {
      const text = this.#quoted(true);
      this.#endOfOperand();
      return text;
    }
    if (c === "<") return this.#heredoc();
    if (c === "[") return this.#list();
    if (c === "{") return this.#object();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      NUMBER.lastIndex = this.#pos;
      const m = NUMBER.exec(this.text);
      if (!m) throw new Outside();
      this.#pos += m[0].length;
      this.#endOfOperand();
      const n = Number(m[0]);
      if (!Number.isFinite(n)) throw new Outside();
      return n;
    }
    const word = this.#ident();
    if (word === "true" || word === "false" || word === "null") {
      this.#endOfOperand();
      return word === "null" ? null : word === "true";
    }
    throw new Outside();
  }

  /** After a literal: no operator, call or index may follow (hcl2json renders those). */
  #endOfOperand() {
    const save = this.#pos;
    this.#skip(false);
    const c = this.#peek();
    this.#pos = save;
    if (c !== undefined && !",]}\n\r#/".includes(c) && c !== " " && c !== "\t") {
      throw new Outside();
    }
  }

  /** A quoted string; `template` allows `${env.NAME}` (kept verbatim, as hcl2json keeps it). */
  #quoted(template: boolean): string {
    const t = this.text;
    this.#pos++;
    let out = "";
    // hcl2json renders a string with a template part back as source: escapes would differ.
    let escaped = false;
    let templated = false;
    for (;;) {
      const c = t[this.#pos];
      if (c === undefined || c === "\n") throw new Outside();
      if (c === '"') {
        this.#pos++;
        if (escaped && templated) throw new Outside();
        return out;
      }
      if (c === "\\") {
        escaped = true;
        const e = t[this.#pos + 1];
        const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\" };
        if (!(e in simple)) throw new Outside();
        out += simple[e];
        this.#pos += 2;
        continue;
      }
      if (c === "$" || c === "%") {
        const part = this.#templatePart(template);
        templated ||= part.length > 1;
        out += part;
        continue;
      }
      out += c;
      this.#pos++;
    }
  }

  /** `${env.NAME}` verbatim; anything else with `${` or `%{` is outside the subset. */
  #templatePart(template: boolean): string {
    const t = this.text;
    const c = t[this.#pos];
    if (t[this.#pos + 1] !== "{") {
      this.#pos++;
      return c;
    }
    if (c === "%" || !template) throw new Outside();
    const end = t.indexOf("}", this.#pos);
    const inner = end < 0 ? "" : t.slice(this.#pos + 2, end);
    if (!ENV_REF.test(inner)) throw new Outside();
    this.#pos = end + 1;
    return `\${${inner}}`;
  }

  /** `<<EOT` / `<<-EOT` ... `EOT`. */
  #heredoc(): string {
    const t = this.text;
    const m = /<<(-?)([A-Za-z_][A-Za-z0-9_]*)\r?\n/y;
    m.lastIndex = this.#pos;
    const head = m.exec(t);
    if (!head) throw new Outside();
    const [, flush, marker] = head;
    this.#pos += head[0].length;
    const lines: string[] = [];
    for (;;) {
      if (this.#pos >= t.length) throw new Outside();
      let end = t.indexOf("\n", this.#pos);
      if (end < 0) end = t.length;
      const line = t.slice(this.#pos, end);
      this.#pos = end;
      if (line.trim() === marker) break;
      if (line.includes("\r")) throw new Outside();
      lines.push(line);
      this.#pos++;
    }
    let content = lines;
    if (flush) {
      if (lines.some((l) => l.trim() === "" || /^ *\t/.test(l))) throw new Outside();
      const indent = Math.min(...lines.map((l) => l.length - l.trimStart().length));
      content = lines.map((l) => l.slice(indent));
    }
    const raw = content.map((l) => `${l}\n`).join("");
    // Template parts in a heredoc: the same subset as in quoted strings.
    let out = "";
    for (let i = 0; i < raw.length;) {
      const c = raw[i];
      if ((c === "$" || c === "%") && raw[i + 1] === "{") {
        if (c === "%") throw new Outside();
        const end = raw.indexOf("}", i);
        const inner = end < 0 ? "" : raw.slice(i + 2, end);
        if (!ENV_REF.test(inner)) throw new Outside();
        out += `\${${inner}}`;
        i = end + 1;
      } else {
        out += c;
        i++;
      }
    }
    return out;
  }

  #list(): Value[] {
    this.#pos++;
    const out: Value[] = [];
    for (;;) {
      this.#skip(true);
      if (this.#peek() === "]") {
        this.#pos++;
        this.#endOfOperand();
        return out;
      }
      out.push(this.#value());
      this.#skip(true);
      if (this.#peek() === ",") this.#pos++;
      else if (this.#peek() !== "]") throw new Outside();
    }
  }

  #object(): Record<string, Value> {
    this.#pos++;
    const out: Record<string, Value> = {};
    for (;;) {
      this.#skip(true);
      if (this.#peek() === "}") {
        this.#pos++;
        this.#endOfOperand();
        return out;
      }
      const key = this.#peek() === '"' ? this.#quoted(false) : this.#ident();
      if (key === undefined || key in out) throw new Outside();
      this.#skip(false);
      const sep = this.#peek();
      if (sep !== "=" && sep !== ":") throw new Outside();
      this.#pos++;
      this.#skip(false);
      out[key] = this.#value();
      const crossed = this.#skip(false);
      if (this.#peek() === ",") this.#pos++;
      else if (!crossed && this.#peek() !== "}" && this.#peek() !== "\n") throw new Outside();
    }
  }
}
