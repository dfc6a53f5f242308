// The audit trail (admins): who did what, when (in the viewer's zone), from where, and the facts of
// it (a correction's old and new values). Filtered by batch, actor and action, the filters kept in
// the address; the same filters export the trail as CSV.

import { $, api, currentRoute, el, go, href, timeEl } from "./lib.js";

const FILTERS = ["batch", "actor", "action"];
let cursor = null;

function filtersOf(query) {
  return Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ""]).filter(([, v]) => v !== ""));
}

/** A correction's changes as lines (`row 2 amount: 5.13 → 900000.00`), else the facts as text. */
function detailText(detail) {
  if (!detail) return "";
  const lines = [];
  for (const c of Array.isArray(detail.changes) ? detail.changes : []) {
    lines.push(`row ${c.row} ${c.field}: ${c.old || "(blank)"} → ${c.new || "(blank)"}`);
  }
  const rest = Object.entries(detail).filter(([k]) => k !== "changes");
  if (rest.length)
    lines.push(rest.map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", "));
  return lines.map((l) => el("div", {}, l));
}

async function more(reset, filters) {
  const q = new URLSearchParams({ limit: "50", ...filters });
  if (!reset && cursor) q.set("cursor", cursor);
  const page = await api(`/api/v1/audit?${q}`);
  const body = $("audit-list").tBodies[0];
  if (reset) body.replaceChildren();
  body.append(
    ...page.data.map((e) =>
      el(
        "tr",
        {},
        el("td", {}, timeEl(e.at)),
        el("td", {}, `${e.actor.name} (${e.actor.kind}${e.actor.role ? `, ${e.actor.role}` : ""})`),
        el("td", {}, e.action),
        el("td", {}, e.target ?? ""),
        el("td", {}, e.from),
        el("td", {}, e.outcome),
        el("td", { class: "detail" }, detailText(e.detail)),
      ),
    ),
  );
  if (reset && page.data.length === 0) {
    body.append(el("tr", {}, el("td", { colspan: "7", class: "muted" }, "No entries match.")));
  }
  cursor = page.nextCursor;
  $("audit-more").hidden = !cursor;
}

function filterForm(filters) {
  const input = (name, label, placeholder, size = "22") => [
    el("label", { for: `audit-${name}` }, label),
    el("input", { id: `audit-${name}`, name, value: filters[name] ?? "", placeholder, size }),
  ];
  return el(
    "form",
    {
      id: "audit-filter",
      class: "filters",
      role: "search",
      onsubmit: (e) => {
        e.preventDefault();
        const next = {};
        for (const f of FILTERS) {
          const v = $(`audit-${f}`).value.trim();
          if (v) next[f] = v;
        }
        go(href(["audit"], next));
      },
    },
    // Wide enough for a whole batch id (b, its time, a hex suffix).
    ...input("batch", "Batch", "batch id", "32"),
    ...input("actor", "Who", "alice, cli:ops, system:inbox"),
    ...input("action", "What", "rows.correct, or rows"),
    el("button", { type: "submit" }, "Show entries"),
  );
}

export async function renderAudit() {
  const filters = filtersOf(currentRoute().query);
  const exportQuery = new URLSearchParams(filters).toString();
  $("page").replaceChildren(
    el(
      "section",
      { "aria-labelledby": "audit-title" },
      el("h1", { id: "audit-title" }, "Audit trail"),
      filterForm(filters),
      el(
        "p",
        {},
        el(
          "a",
          {
            id: "audit-export",
            href: `/api/v1/audit.csv${exportQuery ? `?${exportQuery}` : ""}`,
            download: "",
          },
          "Export these entries as CSV",
        ),
      ),
      el(
        "div",
        { class: "scroll" },
        el(
          "table",
          { id: "audit-list" },
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              ...["When", "Who", "What", "On", "From", "Outcome", "Detail"].map((h) =>
                el("th", { scope: "col" }, h),
              ),
            ),
          ),
          el("tbody"),
        ),
      ),
      el(
        "button",
        { type: "button", id: "audit-more", hidden: true, onclick: () => more(false, filters) },
        "Load more",
      ),
    ),
  );
  await more(true, filters);
}
