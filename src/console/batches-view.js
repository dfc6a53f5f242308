// The list of batches, newest first, updated live.

import { $, api, count, el, href, money, redraw, stateBadge, timeEl } from "./lib.js";

let cursor = null;

function progress(b) {
  return el(
    "td",
    {},
    el("progress", {
      max: String(b.rows || 1),
      value: String(b.done),
      "aria-label": `${b.done} of ${b.rows} rows final`,
    }),
    ` ${count(b.done)} / ${count(b.rows)}`,
  );
}

function line(b) {
  return el(
    "tr",
    { "data-batch": b.id, "data-created": b.createdAt },
    el("td", {}, el("a", { href: href(["batches", b.id]) }, b.id)),
    el("td", {}, b.sourceName),
    el("td", {}, stateBadge(b.state), b.pause ? [" ", stateBadge("paused")] : null),
    progress(b),
    el(
      "td",
      { class: "num" },
      b.totals.map((t) => el("div", {}, money(t.amount, t.currency))),
    ),
    el("td", {}, b.createdBy ?? "—"),
    el("td", {}, timeEl(b.createdAt)),
  );
}

/**
 * A live update of one batch's line, when the list is on screen; a batch newer than every line shown
 * (one just submitted, from the inbox or by someone else) joins the list at its top.
 */
export function updateBatchLine(b) {
  const shown = document.querySelector(`#batch-list tr[data-batch="${CSS.escape(b.id)}"]`);
  if (shown) {
    redraw(shown, line(b));
    return;
  }
  const body = $("batch-list")?.tBodies[0];
  if (!body) return;
  const newest = body.querySelector("tr[data-batch]")?.dataset.created;
  if (newest && b.createdAt < newest) return;
  body.querySelector("tr:not([data-batch])")?.remove();
  body.prepend(line(b));
}

async function more(reset) {
  const q = new URLSearchParams({ limit: "20" });
  if (!reset && cursor) q.set("cursor", cursor);
  const page = await api(`/api/v1/batches?${q}`);
  const body = $("batch-list").tBodies[0];
  if (reset) body.replaceChildren();
  body.append(...page.data.map(line));
  if (reset && page.data.length === 0) {
    body.append(el("tr", {}, el("td", { colspan: "7" }, "No batch yet: upload a sheet to start one.")));
  }
  cursor = page.nextCursor;
  $("batches-more").hidden = !cursor;
}

export async function renderBatches() {
  $("page").replaceChildren(
    el(
      "section",
      { "aria-labelledby": "batches-title" },
      el("h1", { id: "batches-title" }, "Batches"),
      el(
        "div",
        { class: "scroll" },
        el(
          "table",
          { id: "batch-list" },
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              ...["Batch", "File", "State", "Progress", "Amount", "Submitted by", "Created"].map((h) =>
                el("th", { scope: "col" }, h),
              ),
            ),
          ),
          el("tbody"),
        ),
      ),
      el(
        "button",
        { type: "button", id: "batches-more", hidden: true, onclick: () => more(false) },
        "Load more batches",
      ),
    ),
  );
  await more(true);
}
