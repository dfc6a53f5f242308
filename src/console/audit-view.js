// The audit trail (admins): who did what, when (in the viewer's zone), from where.

import { $, api, el, timeEl } from "./lib.js";

let cursor = null;

async function more(reset) {
  const q = new URLSearchParams({ limit: "50" });
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
      ),
    ),
  );
  cursor = page.nextCursor;
  $("audit-more").hidden = !cursor;
}

export async function renderAudit() {
  $("page").replaceChildren(
    el(
      "section",
      { "aria-labelledby": "audit-title" },
      el("h1", { id: "audit-title" }, "Audit trail"),
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
              ...["When", "Who", "What", "On", "From", "Outcome"].map((h) => el("th", { scope: "col" }, h)),
            ),
          ),
          el("tbody"),
        ),
      ),
      el(
        "button",
        { type: "button", id: "audit-more", hidden: true, onclick: () => more(false) },
        "Load more",
      ),
    ),
  );
  await more(true);
}
