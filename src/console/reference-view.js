// The API reference: /api/v1/openapi.json (generated from the routes' own schemas) as a page, served
// by this server like the rest of the console.

import { $, api, el } from "./lib.js";

let doc = null;

function resolve(schema) {
  let s = schema;
  for (let i = 0; i < 5 && s?.$ref; i++) {
    const name = s.$ref.split("/").pop();
    s = doc.components?.schemas?.[name];
  }
  return s ?? {};
}

function typeOf(schema) {
  const s = resolve(schema);
  const name = schema?.$ref ? schema.$ref.split("/").pop() : null;
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).map(typeOf).join(" or ");
  if (s.type === "array") return `array of ${typeOf(s.items)}`;
  const t = Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "any");
  return name ? `${name} (${t})` : t;
}

/** A schema's fields as a nested list (two levels, then the type's name). */
function fields(schema, depth = 0) {
  const s = resolve(schema);
  const target = s.type === "array" ? resolve(s.items) : s;
  const props = target.properties;
  if (!props || depth > 2) return null;
  const required = new Set(target.required ?? []);
  return el(
    "ul",
    { class: "fields" },
    ...Object.entries(props).map(([k, v]) =>
      el(
        "li",
        {},
        el("code", {}, k),
        required.has(k) ? "" : " (optional)",
        ` — ${typeOf(v)}`,
        resolve(v).description || v.description ? `: ${v.description ?? resolve(v).description}` : "",
        fields(v, depth + 1),
      ),
    ),
  );
}

function operation(path, method, op) {
  const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
  const params = (op.parameters ?? []).map((p) =>
    el(
      "li",
      {},
      el("code", {}, p.name),
      ` (${p.in}${p.required ? ", required" : ""}) — ${typeOf(p.schema)}`,
      p.description ? `: ${p.description}` : "",
    ),
  );
  const body = op.requestBody?.content;
  return el(
    "section",
    { class: "operation", "aria-labelledby": id },
    el(
      "h3",
      { id },
      el("span", { class: `method method-${method}` }, method.toUpperCase()),
      " ",
      el("code", {}, path),
    ),
    op.summary ? el("p", {}, op.summary) : null,
    op.description ? el("p", { class: "muted" }, op.description) : null,
    params.length ? [el("h4", {}, "Parameters"), el("ul", {}, ...params)] : null,
    body
      ? [
          el("h4", {}, `Request body (${Object.keys(body).join(", ")})`),
          fields(Object.values(body)[0].schema) ?? el("p", {}, typeOf(Object.values(body)[0].schema)),
        ]
      : null,
    el("h4", {}, "Answers"),
    el(
      "ul",
      {},
      ...Object.entries(op.responses ?? {}).map(([status, r]) => {
        const schema = r.content?.["application/json"]?.schema;
        const detail = schema && status.startsWith("2") ? fields(schema) : null;
        return el(
          "li",
          {},
          el("strong", {}, status),
          ` ${schema ? typeOf(schema) : (r.description ?? "")}`,
          detail,
        );
      }),
    ),
  );
}

export async function renderReference() {
  doc ??= await api("/api/v1/openapi.json");
  // Sheets first, then batches: the order an integrator uses them in.
  const byTag = new Map(["sheets", "batches", "approvals", "session"].map((t) => [t, []]));
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(operation(path, method, op));
    }
  }
  const schemas = Object.entries(doc.components?.schemas ?? {}).map(([name, s]) =>
    el(
      "section",
      { class: "operation" },
      el("h3", {}, name),
      s.description ? el("p", {}, s.description) : null,
      fields(s),
    ),
  );
  $("page").replaceChildren(
    el(
      "section",
      { "aria-labelledby": "ref-title", class: "reference" },
      el("h1", { id: "ref-title" }, `API reference ${doc.info.version}`),
      el(
        "p",
        {},
        "Every route of /api/v1, generated from the schemas the server validates requests with. Machine-readable: ",
        el("a", { href: "/api/v1/openapi.json" }, "openapi.json"),
        " (OpenAPI 3.1). Authenticate with ",
        el("code", {}, "Authorization: Bearer <token>"),
        " (payouts token create). Errors are ",
        el("code", {}, '{ "error": { "code", "message" } }'),
        "; lists page with limit and cursor.",
      ),
      ...[...byTag]
        .filter(([, ops]) => ops.length > 0)
        .map(([tag, ops]) => el("section", {}, el("h2", {}, tag), ...ops)),
      el("h2", {}, "Shapes"),
      ...schemas,
    ),
  );
}
