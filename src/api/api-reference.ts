/**
 * The API reference as Markdown, rendered from the OpenAPI description the server generates from the
 * routes' own schemas (docs/api.md holds it; a test checks it is current). Pure: no I/O.
 */

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is JSON of many shapes
type Json = any;

const TAG_ORDER = ["sheets", "batches", "approvals", "session"];

function resolve(doc: Json, schema: Json): Json {
  let s = schema;
  for (let i = 0; i < 5 && s?.$ref; i++) s = doc.components?.schemas?.[String(s.$ref).split("/").pop()!];
  return s ?? {};
}

function typeOf(doc: Json, schema: Json): string {
  if (!schema) return "any";
  const named = schema.$ref ? String(schema.$ref).split("/").pop() : undefined;
  if (named) return named;
  if (schema.enum) return schema.enum.map((v: unknown) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.map((a: Json) => typeOf(doc, a)).join(" or ");
  if (schema.type === "array") return `${typeOf(doc, schema.items)}[]`;
  if (Array.isArray(schema.type)) return schema.type.join(" or ");
  return schema.type ?? "any";
}

const oneLine = (text: string | undefined) => (text ?? "").replace(/\s+/g, " ").replaceAll("|", "\\|").trim();

function fieldRows(doc: Json, schema: Json): string[] {
  const s = resolve(doc, schema);
  const required = new Set<string>(s.required ?? []);
  return Object.entries<Json>(s.properties ?? {}).map(
    ([name, field]) =>
      `| \`${name}\` | ${typeOf(doc, field)}${required.has(name) ? "" : " (optional)"} | ${oneLine(field.description ?? resolve(doc, field).description)} |`,
  );
}

function fieldTable(doc: Json, schema: Json): string[] {
  const rows = fieldRows(doc, schema);
  return rows.length > 0 ? ["| field | type | meaning |", "|---|---|---|", ...rows, ""] : [];
}

function operation(doc: Json, route: string, method: string, op: Json): string[] {
  const lines = [`### \`${method.toUpperCase()} ${route}\``, "", oneLine(op.summary), ""];
  if (op.description) lines.push(oneLine(op.description), "");
  const params = (op.parameters ?? []) as Json[];
  if (params.length > 0) {
    lines.push("| parameter | in | type | meaning |", "|---|---|---|---|");
    for (const p of params) {
      lines.push(
        `| \`${p.name}\` | ${p.in}${p.required ? ", required" : ""} | ${typeOf(doc, p.schema)} | ${oneLine(p.description)} |`,
      );
    }
    lines.push("");
  }
  for (const [type, body] of Object.entries<Json>(op.requestBody?.content ?? {})) {
    lines.push(`Request body (\`${type}\`):`, "", ...fieldTable(doc, body.schema));
  }
  const answers = Object.entries<Json>(op.responses ?? {}).map(([status, r]) => {
    const schema = r.content?.["application/json"]?.schema;
    return `${status} ${schema ? typeOf(doc, schema) : oneLine(r.description) || "—"}`;
  });
  if (answers.length > 0) lines.push(`Answers: ${answers.join(" · ")}.`, "");
  return lines;
}

/** The reference section of docs/api.md for `doc`. */
export function renderApiReference(doc: Json): string {
  const byTag = new Map<string, string[][]>(TAG_ORDER.map((t) => [t, []]));
  for (const [route, methods] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(methods)) {
      const tag = op.tags?.[0] ?? "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(operation(doc, route, method, op));
    }
  }
  const lines: string[] = [];
  for (const [tag, ops] of byTag) {
    if (ops.length === 0) continue;
    lines.push(`## ${tag[0]!.toUpperCase()}${tag.slice(1)}`, "");
    for (const op of ops) lines.push(...op);
  }
  lines.push("## Shapes", "");
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    lines.push(`### ${name}`, "");
    if (schema.description) lines.push(oneLine(schema.description), "");
    lines.push(...fieldTable(doc, schema));
  }
  return `${lines.join("\n").trim()}\n`;
}

export const REFERENCE_START = "<!-- reference: generated from /api/v1/openapi.json; do not edit below -->";
