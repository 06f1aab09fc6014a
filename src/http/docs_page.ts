/**
 * The API reference page (`/docs`): the OpenAPI document rendered on the server into one
 * self-contained HTML page (inline CSS, no script, no external URL), so it works offline and
 * behind any firewall. Operations are grouped by tag; schemas are linked by anchors.
 */

type Json = Record<string, unknown>;

/** Renders an OpenAPI 3.1 document as a standalone HTML page. */
export function renderDocsPage(doc: Json): string {
  const info = doc.info as Json;
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const components = (doc.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Record<string, Json>;
  const parameters = (components.parameters ?? {}) as Record<string, Json>;
  const tags = ((doc.tags ?? []) as Json[]).map((t) => ({
    name: String(t.name),
    description: t.description as string | undefined,
  }));
  const byTag = new Map<string, { method: string; path: string; op: Json }[]>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = String((op.tags as string[] | undefined)?.[0] ?? "Other");
      if (!tags.some((t) => t.name === tag)) tags.push({ name: tag, description: undefined });
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, op }]);
    }
  }
  const security = (doc.security as Json[] | undefined)?.length
    ? `<p class="note">API keys are on: send <code>Authorization: Bearer &lt;key&gt;</code> or ` +
      `<code>X-API-Key: &lt;key&gt;</code>. Operations marked <span class="open">open</span> ` +
      `need none.</p>`
    : "";

  const nav = tags.filter((t) => byTag.has(t.name)).map((t) =>
    `<li><a href="#tag-${anchor(t.name)}">${esc(t.name)}</a><ul>${
      byTag.get(t.name)!.map(({ method, path, op }) =>
        `<li><a href="#op-${
          anchor(String(op.operationId))
        }"><span class="m m-${method}">${method.toUpperCase()}</span> ${esc(path)}</a></li>`
      ).join("")
    }</ul></li>`
  ).join("");

  const sections = tags.filter((t) => byTag.has(t.name)).map((t) =>
    `<section class="tag" id="tag-${anchor(t.name)}"><h2>${esc(t.name)}</h2>${
      t.description ? `<p>${text(t.description)}</p>` : ""
    }${
      byTag.get(t.name)!.map(({ method, path, op }) =>
        operation(method, path, op, parameters, doc.security !== undefined)
      ).join("")
    }</section>`
  ).join("");

  const schemaSections = Object.entries(schemas).map(([name, schema]) =>
    `<section class="schema" id="schema-${anchor(name)}"><h3>${esc(name)}</h3>${
      schema.description ? `<p>${text(String(schema.description))}</p>` : ""
    }${schemaBody(schema, 0)}</section>`
  ).join("");

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(String(info.title))} — API reference</title>
<style>${CSS}</style>
</head>
<body>
<nav><p class="brand">${
    esc(String(info.title))
  }</p><ul>${nav}<li><a href="#schemas">Schemas</a></li></ul></nav>
<main>
<header><h1>${esc(String(info.title))} <small>${esc(String(info.version))} · OpenAPI ${
    esc(String(doc.openapi))
  }</small></h1>
<p>${text(String(info.description ?? ""))}</p>
<p class="note">Machine-readable: <a href="#op-openapi"><code>GET /v1/openapi.json</code></a>.
Every request may send <code>X-Request-ID</code>; every response carries it.</p>
${security}</header>
${sections}
<section id="schemas"><h2>Schemas</h2>${schemaSections}</section>
</main>
</body>
</html>
`;
}

function operation(
  method: string,
  path: string,
  op: Json,
  shared: Record<string, Json>,
  authOn: boolean,
): string {
  // `X-Request-ID` is on every operation; the page says so once, in its header.
  const params = ((op.parameters ?? []) as Json[]).filter((p) =>
    p.$ref !== "#/components/parameters/RequestId"
  ).map((p) => typeof p.$ref === "string" ? shared[refName(p.$ref)] ?? p : p);
  const open = authOn && Array.isArray(op.security) && op.security.length === 0;
  const paramRows = params.map((p) =>
    `<tr><td><code>${esc(String(p.name))}</code>${
      p.required ? ' <span class="req">required</span>' : ""
    }</td><td>${esc(String(p.in))}</td><td>${typeLabel((p.schema ?? {}) as Json)}</td><td>${
      text(String(p.description ?? ""))
    }</td></tr>`
  ).join("");
  const body = op.requestBody as Json | undefined;
  const bodyHtml = body
    ? `<h4>Request body${body.required ? "" : " (optional)"}</h4>${content(body.content as Json)}`
    : "";
  const responses = Object.entries(op.responses as Record<string, Json>).map(([status, r]) =>
    `<details${status.startsWith("2") ? " open" : ""}><summary><span class="st st-${status[0]}">${
      esc(status)
    }</span> ${text(String(r.description ?? ""))}</summary>${
      headers(r.headers as Json | undefined)
    }${r.content ? content(r.content as Json) : ""}</details>`
  ).join("");
  return `<article class="op" id="op-${anchor(String(op.operationId))}">
<h3><span class="m m-${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code>${
    open ? ' <span class="open">open</span>' : ""
  }</h3>
<p class="summary">${text(String(op.summary ?? ""))}</p>${
    op.description ? `<p>${text(String(op.description))}</p>` : ""
  }${
    paramRows
      ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>meaning</th></tr>${paramRows}</table>`
      : ""
  }${bodyHtml}<h4>Responses</h4>${responses}</article>`;
}

function headers(h: Json | undefined): string {
  const names = Object.keys(h ?? {}).filter((n) => n !== "x-request-id");
  if (names.length === 0) return "";
  return `<p class="hdr">Headers: ${
    names.map((n) => `<code>${esc(n)}</code> ${text(String((h![n] as Json).description ?? ""))}`)
      .join("; ")
  }</p>`;
}

function content(c: Json): string {
  return Object.entries(c).map(([type, media]) => {
    const m = media as Json;
    const examples = Object.entries((m.examples ?? {}) as Record<string, Json>).map(([, ex]) =>
      `<pre>${esc(JSON.stringify(ex.value, null, 2))}</pre>`
    ).join("");
    const schema = (m.schema ?? {}) as Json;
    // An event stream's schema is the schema of each event (see openapi/document.ts).
    return `<div class="media"><p><code>${esc(type)}</code> ${
      type === "text/event-stream"
        ? `each event: ${typeLabel(schema)}</p>`
        : `${typeLabel(schema)}</p>${schemaBody(schema, 1)}`
    }${examples}</div>`;
  }).join("");
}

/** A one-line type: `string`, `integer ≥ 1`, `array of Message`, links for references. */
function typeLabel(s: Json): string {
  if (typeof s.$ref === "string") {
    const name = refName(s.$ref);
    return `<a href="#schema-${anchor(name)}">${esc(name)}</a>`;
  }
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (alternatives) return alternatives.map(typeLabel).join(" | ");
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  if (Array.isArray(s.enum)) {
    return s.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(" | ");
  }
  const type = Array.isArray(s.type) ? s.type.join(" | ") : s.type as string | undefined;
  if (type === "array") return `array of ${typeLabel((s.items ?? {}) as Json)}`;
  if (type === "object" && !s.properties && s.additionalProperties !== undefined) {
    return "object";
  }
  const notes: string[] = [];
  if (s.format) notes.push(String(s.format));
  if (s.minimum !== undefined) notes.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) notes.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) notes.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) notes.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) notes.push(`length ≤ ${s.maxLength}`);
  if (s.minItems !== undefined) notes.push(`≥ ${s.minItems} items`);
  if (s.pattern) notes.push(`<code>${esc(String(s.pattern))}</code>`);
  if (s.default !== undefined) notes.push(`default ${esc(JSON.stringify(s.default))}`);
  const label = type ?? "any JSON";
  return `<span class="t">${esc(label)}</span>${
    notes.length ? ` <span class="n">(${notes.join(", ")})</span>` : ""
  }`;
}

/** The fields of an object schema (nested inline objects indented), or its alternatives. */
function schemaBody(s: Json, depth: number): string {
  if (depth > 6 || typeof s.$ref === "string") return "";
  const mapping = (s.discriminator as Json | undefined)?.mapping as Record<string, string>;
  if (mapping) {
    const property = String((s.discriminator as Json).propertyName);
    return `<ul class="fields">${
      Object.entries(mapping).map(([value, target]) =>
        `<li><code>${esc(property)}: ${esc(JSON.stringify(value))}</code> → ${
          typeLabel({ $ref: target })
        }</li>`
      ).join("")
    }</ul>`;
  }
  const alternatives = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  // Listed when they are the point (a union at the top, or inline objects); `X | null` is not.
  if (alternatives && alternatives.some((a) => a.properties || (a.$ref && depth === 0))) {
    const inline = alternatives.filter((a) => a.properties);
    return `<p>One of: ${alternatives.map(typeLabel).join(", ")}</p>${
      inline.map((a) => schemaBody(a, depth + 1)).join("")
    }`;
  }
  if (s.type === "array" && s.items) return schemaBody(s.items as Json, depth + 1);
  const props = s.properties as Record<string, Json> | undefined;
  if (!props) return "";
  const required = new Set((s.required ?? []) as string[]);
  const rows = Object.entries(props).map(([name, p]) => {
    const nested = schemaBody(p, depth + 1);
    return `<li><code>${esc(name)}</code> ${typeLabel(p)}${
      required.has(name) ? ' <span class="req">required</span>' : ""
    }${p.description ? ` — ${text(String(p.description))}` : ""}${nested}</li>`;
  }).join("");
  const closed = s.additionalProperties === false
    ? '<li class="n">no other fields (an unknown one is a 422)</li>'
    : "";
  return `<ul class="fields">${rows}${closed}</ul>`;
}

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1);
}

function anchor(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "-");
}

function esc(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** Escaped text with `code` spans. */
function text(value: string): string {
  return esc(value).replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\n\n/g, "</p><p>");
}

const CSS = `
:root{--fg:#1d232b;--mut:#5b6673;--bg:#fff;--side:#f5f7f9;--line:#e2e6ea;--acc:#2457c5}
@media (prefers-color-scheme:dark){:root{--fg:#e3e7ec;--mut:#9aa5b1;--bg:#14181d;--side:#1b2027;--line:#2b323b;--acc:#7aa7ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);display:flex}
nav{position:sticky;top:0;height:100vh;overflow-y:auto;overflow-x:hidden;overflow-wrap:anywhere;width:300px;flex:none;background:var(--side);border-right:1px solid var(--line);padding:12px;font-size:13px}
nav ul{list-style:none;margin:0;padding-left:8px}nav>ul{padding:0}nav li{margin:2px 0}nav a{color:var(--fg);text-decoration:none}nav a:hover{color:var(--acc)}
.brand{font-weight:700;margin:0 0 8px}main{flex:1;min-width:0;padding:16px 32px;max-width:1100px}
h1 small{font-size:14px;color:var(--mut);font-weight:400}h2{border-bottom:2px solid var(--line);padding-bottom:4px;margin-top:40px}
h3{margin:0 0 4px}h4{margin:14px 0 4px;font-size:14px;color:var(--mut)}a{color:var(--acc)}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}pre{background:var(--side);border:1px solid var(--line);padding:8px;overflow:auto;border-radius:4px}
.op,.schema{border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin:16px 0}
.m{display:inline-block;min-width:54px;text-align:center;border-radius:3px;color:#fff;font:700 12px/20px ui-monospace,monospace;padding:0 4px}
.m-get{background:#2f7d32}.m-post{background:#2457c5}.m-put{background:#b26a00}.m-delete{background:#b3261e}
.summary{font-weight:600;margin:4px 0}.note,.n,.hdr{color:var(--mut)}.req{color:#b3261e;font-size:12px}
.open{font-size:12px;border:1px solid var(--mut);border-radius:3px;padding:0 4px;color:var(--mut)}
table{border-collapse:collapse;width:100%;font-size:14px}td,th{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
details{margin:4px 0}summary{cursor:pointer}.st{font:700 13px ui-monospace,monospace}.st-2{color:#2f7d32}.st-4{color:#b26a00}.st-5{color:#b3261e}
ul.fields{margin:4px 0;padding-left:18px}ul.fields li{margin:2px 0}.t{font-style:italic}
@media (max-width:800px){body{display:block}nav{position:static;width:auto;height:auto}main{padding:12px}}
`;
