// One batch: what it is, why it is held and who may release it, its progress per currency (paid,
// failed, pending) with rate and time left, and its rows at any size (sheet order, page jump, filter,
// search), each with what happened, what to do next and what it waits for. Its address carries the
// filters, so a link shows the same rows.

import { stopControls } from "./batch-stop.js";
import { correctRowForm, heldCorrectionsList } from "./correct-row-form.js";
import { ledgerCard, runLedgerCheck } from "./ledger-card.js";
import {
  $,
  addAmounts,
  api,
  confirmDialog,
  count,
  currentRoute,
  duration,
  el,
  go,
  href,
  may,
  money,
  redraw,
  say,
  session,
  stateBadge,
  timeEl,
  when,
  withTimes,
} from "./lib.js";

const PAGE = 50;
/** Requests a search makes on its own before it asks whether to go on. */
const SEARCH_STEPS = 20;
const PAID = ["completed"];
/** Not paid and not on the way: failed, refused, unknown, or canceled (at the service, or before it was sent). */
const FAILED = ["failed", "rejected", "error", "canceled", "canceled-unsent"];
/** Paid, then sent back (an ACH return): shown on their own, since the payee has not got the money. */
const RETURNED = ["returned"];
const PENDING = ["queued", "submitted", "in-progress"];
const RETRYABLE = new Set(["failed", "canceled", "canceled-unsent", "rejected", "error", "returned"]);
const ATTENTION = "failed,rejected,error,canceled,returned";
const ROW_STATES = [
  "queued",
  "submitted",
  "in-progress",
  "completed",
  "failed",
  "canceled",
  "canceled-unsent",
  "rejected",
  "error",
  "returned",
];

const view = {
  id: null,
  batch: null,
  samples: [],
  rowsTimer: null,
  approval: null,
  ledgerAnswer: null,
  ledgerRunning: false,
};

// ---- header, progress ------------------------------------------------------------------------------

function totalsLine(b) {
  return b.totals.map((t) => money(t.amount, t.currency)).join(" + ") || "nothing";
}

/** Rows handed to the service so far (out of `queued`): what moves first, and steadily. */
const sent = (b) => b.rows - (b.counts.queued ?? 0);

function rateText(b) {
  const s = view.samples;
  if (b.state === "finished") return b.finishedAt ? `Finished ${when(b.finishedAt)}.` : "Finished.";
  if (b.state !== "running") return "";
  const first = s[0];
  const last = s[s.length - 1];
  const minutes = s.length < 2 ? 0 : (last.t - first.t) / 60_000;
  const rows = s.length < 2 ? 0 : last.sent - first.sent;
  if (minutes < 5 / 60 || rows <= 0) {
    return sent(b) >= b.rows
      ? "Every row is with the service; waiting for the last outcomes."
      : "Measuring the rate…";
  }
  const perMinute = rows / minutes;
  const left = b.rows - sent(b);
  if (left <= 0) return "Every row is with the service; waiting for the last outcomes.";
  return `${count(Math.round(perMinute))} rows per minute sent to the service; ${count(left)} left, ${duration((left / perMinute) * 60_000)} to go.`;
}

function progressCard(b) {
  const returned = b.counts.returned ?? 0;
  const rows = b.totals.map((t) => {
    const sum = (states) => addAmounts(states.map((s) => t.byState[s] ?? "0"));
    return el(
      "tr",
      {},
      el("th", { scope: "row" }, t.currency),
      el("td", { class: "num" }, money(sum(PAID), t.currency)),
      el("td", { class: "num" }, money(sum(FAILED), t.currency)),
      returned ? el("td", { class: "num returned" }, money(sum(RETURNED), t.currency)) : null,
      el("td", { class: "num" }, money(sum(PENDING), t.currency)),
      el("td", { class: "num" }, money(t.amount, t.currency)),
    );
  });
  const byState = Object.entries(b.counts)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${s} ${count(n)}`)
    .join(", ");
  return el(
    "section",
    { class: "card", "aria-labelledby": "progress-title", id: "progress-card" },
    el("h2", { id: "progress-title" }, "Progress"),
    el(
      "p",
      {},
      el("progress", {
        max: String(b.rows || 1),
        value: String(b.done),
        "aria-label": `${b.done} of ${b.rows} rows final`,
      }),
      ` ${count(b.done)} of ${count(b.rows)} rows final`,
      byState ? ` (${byState})` : "",
      b.invalidRows ? `; ${count(b.invalidRows)} invalid rows were not submitted` : "",
      ".",
    ),
    el("p", { id: "rate" }, rateText(b)),
    returned
      ? el(
          "p",
          { id: "returned-note", class: "warning" },
          el("span", { class: "state state-returned" }, "returned"),
          ` ${count(returned)} row${returned === 1 ? " was" : "s were"} paid, then came back: the payee does not have the money. `,
          el("a", { href: href(["batches", b.id], { state: "returned" }) }, "Show the returned rows"),
          " (each says what to do; correct and retry them).",
        )
      : null,
    el(
      "table",
      { class: "compact" },
      el("caption", {}, "Money per currency"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["Currency", "Paid", "Failed or canceled", returned ? "Returned" : null, "Pending", "Total"]
            .filter(Boolean)
            .map((h) => el("th", { scope: "col" }, h)),
        ),
      ),
      el("tbody", {}, ...rows),
    ),
  );
}

function header(b) {
  return el(
    "div",
    { id: "batch-header" },
    el("h1", { id: "batch-title" }, `Batch ${b.id}`),
    el(
      "p",
      { class: "sub" },
      stateBadge(b.state),
      ` ${b.sourceName} · ${count(b.rows)} rows, ${totalsLine(b)} · submitted by ${b.createdBy ?? "—"}, `,
      timeEl(b.createdAt),
    ),
    el(
      "p",
      { class: "links" },
      el("a", { href: `/api/v1/batches/${b.id}/result.csv`, download: "" }, "Download the result (CSV)"),
      " · ",
      el("a", { href: `/api/v1/batches/${b.id}/result.xlsx`, download: "" }, "Download the result (XLSX)"),
      b.uploadId
        ? [
            " · ",
            el("a", { href: `/api/v1/sheets/${b.uploadId}/report.csv`, download: "" }, "Validation report"),
          ]
        : null,
      " · ",
      el(
        "button",
        {
          type: "button",
          class: "link",
          onclick: async () => {
            const link = `${window.location.origin}/${href(["batches", view.id])}`;
            await navigator.clipboard?.writeText(link).catch(() => {});
            say(["Link to this batch: ", el("code", {}, link)]);
          },
        },
        "Copy a link to this batch",
      ),
    ),
  );
}

// ---- approval ------------------------------------------------------------------------------------

function approvalCard(b, a) {
  if (!a) return el("div", { id: "approval-card", hidden: true });
  const reasons = a.reasons.map((r) =>
    el(
      "li",
      {},
      `The ${r.currency} total, ${money(r.total, r.currency)}, reached the approval threshold of ${money(r.threshold, r.currency)}`,
      r.rule === "*" ? " (the rule for every currency)." : ` (the ${r.rule} rule).`,
    ),
  );
  const status =
    a.status === "awaiting-approval"
      ? `Waiting for approval: ${a.approvals.length} of ${a.required} given. Nothing is paid until it is approved. Expires ${when(a.expiresAt)}.`
      : a.status === "rejected"
        ? `Rejected by ${a.decidedBy}, ${when(a.decidedAt)}: ${a.reason ?? ""}. No row was paid.`
        : a.status === "expired"
          ? `Expired ${when(a.decidedAt ?? a.expiresAt)} without a decision. No row was paid.`
          : `Approved ${when(a.decidedAt)} (${a.approvals.length} of ${a.required}).`;
  const mayDecide =
    a.status === "awaiting-approval" && may("batches.approve") && session.me.name !== a.submittedBy;
  return el(
    "section",
    { class: "card approval", id: "approval-card", "aria-labelledby": "approval-title" },
    el("h2", { id: "approval-title" }, "Approval"),
    el("p", { id: "approval-summary" }, stateBadge(a.status), ` ${status}`),
    el("p", {}, `Submitted by ${a.submittedBy}, `, timeEl(a.requestedAt), "."),
    reasons.length
      ? [
          el("h3", {}, a.status === "awaiting-approval" ? "Why it is held" : "Why it was held"),
          el("ul", {}, ...reasons),
        ]
      : null,
    heldCorrectionsList(a),
    a.approvals.length
      ? [
          el("h3", {}, "Approvals given"),
          el(
            "ul",
            { id: "approval-list" },
            ...a.approvals.map((x) => el("li", {}, `Approved by ${x.by}, `, timeEl(x.at))),
          ),
        ]
      : null,
    a.largest.length
      ? el(
          "table",
          { class: "compact", id: "largest" },
          el("caption", {}, "The largest rows, per currency"),
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              ...["Row", "Reference", "Payee", "Amount"].map((h) => el("th", { scope: "col" }, h)),
            ),
          ),
          el(
            "tbody",
            {},
            ...a.largest.map((r) =>
              el(
                "tr",
                {},
                el(
                  "td",
                  { class: "num" },
                  el("a", { href: href(["batches", b.id, "rows", String(r.row)]) }, String(r.row)),
                ),
                el("td", {}, r.reference ?? ""),
                el("td", {}, r.payee),
                el("td", { class: "num" }, money(r.amount, r.currency)),
              ),
            ),
          ),
        )
      : null,
    mayDecide
      ? el(
          "form",
          { id: "approval-form", class: "filters", onsubmit: (e) => e.preventDefault() },
          el(
            "button",
            { type: "button", id: "approve", class: "primary", onclick: () => decide("approve") },
            correctionRound(a) ? "Approve these corrections…" : "Approve this batch…",
          ),
          el("label", { for: "reject-reason" }, "Reason for rejecting"),
          el("input", { id: "reject-reason", type: "text", size: "40", maxlength: "500" }),
          el(
            "button",
            { type: "button", id: "reject", onclick: () => decide("reject") },
            correctionRound(a) ? "Reject these corrections…" : "Reject this batch…",
          ),
        )
      : a.status === "awaiting-approval" && session.me.name === a.submittedBy
        ? el(
            "p",
            { class: "muted" },
            "You submitted this batch, so someone else must approve it. Send them a link to this page.",
          )
        : null,
  );
}

/** The approval when it is a correction round with corrections listed (it decides only those rows). */
function correctionRound(a) {
  return a?.heldFor === "correction" && a.corrections?.length ? a : null;
}

async function decide(action) {
  const b = view.batch;
  const reason = $("reject-reason").value.trim();
  if (action === "reject" && !reason) {
    say(
      "Say why the batch is rejected (the reason goes to the submitter, the result file and the audit trail).",
      true,
    );
    $("reject-reason").focus();
    return;
  }
  // A correction round decides only its corrected rows (the rest were approved before): say those.
  const round = correctionRound(view.approval);
  const ok = await confirmDialog(
    action === "approve" && round
      ? {
          title: "Approve these corrections?",
          lines: [
            `You approve the corrections of round ${round.round} of ${b.sourceName}; each corrected row is paid again as changed:`,
            ...round.corrections.map(
              (c) =>
                `Row ${c.row}, by ${c.by}: ${c.changes.map((x) => `${x.field} ${x.old} → ${x.new}`).join("; ")}`,
            ),
            "Once the last approval is given, the corrected rows are paid; this cannot be undone.",
          ],
          confirm: "Approve the corrections",
        }
      : action === "approve"
        ? {
            title: "Approve this batch?",
            lines: [
              `You approve paying ${totalsLine(b)} in ${count(b.rows)} rows of ${b.sourceName}.`,
              "Once the last approval is given, the rows are paid; this cannot be undone.",
            ],
            confirm: `Approve paying ${totalsLine(b)}`,
          }
        : round
          ? {
              title: "Reject these corrections?",
              lines: [
                `The corrected rows of round ${round.round} of ${b.sourceName} stay as they were, unpaid by these corrections:`,
                ...round.corrections.map((c) => `Row ${c.row}, by ${c.by}`),
                `Reason: ${reason}`,
              ],
              confirm: "Reject the corrections",
            }
          : {
              title: "Reject this batch?",
              lines: [`No row of ${b.sourceName} (${totalsLine(b)}) will be paid.`, `Reason: ${reason}`],
              confirm: "Reject the batch",
            },
  );
  if (!ok) return;
  try {
    const { outcome } = await api(`/api/v1/batches/${encodeURIComponent(b.id)}/${action}`, {
      method: "POST",
      json: action === "reject" ? { reason } : {},
    });
    await load(b.id);
    say(
      outcome === "approved"
        ? `Approved by you, ${when(new Date().toISOString())}: the batch's rows went to payment.`
        : outcome === "recorded"
          ? `Your approval is recorded, ${when(new Date().toISOString())}; the card shows how many more are needed.`
          : outcome === "rejected"
            ? "Rejected: every row is canceled; nothing is paid."
            : `Nothing changed (${outcome}).`,
    );
  } catch (err) {
    say(err.message, true);
  }
}

// ---- rows ----------------------------------------------------------------------------------------

function helpCell(r) {
  if (r.help) {
    return el(
      "td",
      { class: "help" },
      el("strong", {}, r.errorCode),
      ` ${r.help.sentence} `,
      el("span", { class: "next" }, `Next: ${r.help.nextStep}`),
    );
  }
  return el("td", { class: "muted" }, withTimes(r.waitingFor));
}

function rowLine(b, r) {
  const mayRetry = may("rows.retry") && RETRYABLE.has(r.state);
  const mayCancel = may("rows.cancel") && r.paymentId && r.paymentStatus === "scheduled";
  return el(
    "tr",
    { "data-row": String(r.row), "data-state": r.state },
    el(
      "td",
      {},
      mayRetry
        ? el("input", {
            type: "checkbox",
            class: "pick",
            value: String(r.row),
            "aria-label": `Select row ${r.row}`,
          })
        : "",
    ),
    el("th", { scope: "row", class: "num" }, String(r.row)),
    el("td", {}, r.reference ?? ""),
    el(
      "td",
      {},
      r.payee
        ? [r.payee.name ? el("div", {}, r.payee.name) : null, el("div", { class: "muted" }, r.payee.account)]
        : "",
    ),
    el("td", { class: "num" }, money(r.amount, r.currency)),
    el("td", {}, stateBadge(r.state)),
    el("td", {}, r.paymentId ?? ""),
    helpCell(r),
    el("td", { class: "num" }, r.attempt === null ? "" : String(r.attempt)),
    el(
      "td",
      { class: "actions-cell" },
      r.state === "invalid"
        ? ""
        : el(
            "a",
            {
              href: href(["batches", b.id, "rows", String(r.row)], Object.fromEntries(currentRoute().query)),
            },
            "Details",
            el("span", { class: "visually-hidden" }, ` of row ${r.row}`),
          ),
      mayCancel
        ? el(
            "button",
            { type: "button", onclick: () => cancelRow(r.row) },
            "Cancel payment",
            el("span", { class: "visually-hidden" }, ` of row ${r.row}`),
          )
        : "",
    ),
  );
}

function filters(query) {
  const state = query.get("state") ?? "";
  const form = el(
    "form",
    {
      id: "row-filter",
      class: "filters",
      role: "search",
      onsubmit: (e) => {
        e.preventDefault();
        go(href(["batches", view.id], { state: $("state-filter").value, q: $("q").value.trim() }));
      },
    },
    el("label", { for: "state-filter" }, "Show"),
    el(
      "select",
      { id: "state-filter" },
      el("option", { value: "" }, "every valid row"),
      el("option", { value: ATTENTION }, "rows that need attention"),
      ...ROW_STATES.map((s) => el("option", { value: s }, s)),
      el("option", { value: "invalid" }, "invalid rows (not submitted)"),
    ),
    el("label", { for: "q" }, "Search"),
    el("input", {
      id: "q",
      type: "search",
      size: "28",
      placeholder: "reference, payee, amount, error code",
      value: query.get("q") ?? "",
    }),
    el("button", { type: "submit", id: "rows-show" }, "Show rows"),
  );
  form.querySelector("#state-filter").value = state;
  return form;
}

/** Whether the listing is read straight from sheet order (pages by position, a jump possible). */
const positional = (query) => !query.get("q") && (!query.get("state") || query.get("state") === "invalid");

function pager(page, query) {
  const nav = el("nav", { class: "pager", "aria-label": "Pages of rows", id: "rows-pager" });
  const base = { state: query.get("state") ?? "", q: query.get("q") ?? "" };
  const to = (extra) => href(["batches", view.id], { ...base, ...extra });
  if (positional(query)) {
    const offset = page.offset ?? 0;
    if (offset > 0)
      nav.append(
        el("a", { href: to({ offset: Math.max(0, offset - PAGE) }), id: "rows-prev" }, "← Previous"),
        " ",
      );
    if (page.nextCursor)
      nav.append(el("a", { href: to({ offset: offset + PAGE }), id: "rows-next" }, "Next →"), " ");
    const pages = Math.ceil(page.rows / PAGE);
    if (pages > 1) {
      nav.append(
        el(
          "form",
          {
            class: "jump",
            onsubmit: (e) => {
              e.preventDefault();
              const n = Math.min(pages, Math.max(1, Math.round(Number($("page-jump").value)) || 1));
              go(to({ offset: (n - 1) * PAGE }));
            },
          },
          el("label", { for: "page-jump" }, "Go to page"),
          el("input", {
            id: "page-jump",
            type: "number",
            min: "1",
            max: String(pages),
            value: String(Math.floor(offset / PAGE) + 1),
          }),
          ` of ${count(pages)} `,
          el("button", { type: "submit" }, "Go"),
        ),
      );
    }
    return nav;
  }
  if (query.get("c")) nav.append(el("a", { href: to({}), id: "rows-first" }, "First page"), " ");
  if (page.nextCursor) nav.append(el("a", { href: to({ c: page.nextCursor }), id: "rows-next" }, "Next →"));
  return nav;
}

function summaryText(page, query) {
  const shown = page.data.length;
  if (!positional(query)) {
    const total = page.total !== null ? ` of ${count(page.total)} matching` : "";
    const where = page.nextCursor
      ? page.reached !== null
        ? ` Searched ${count(page.reached)} of ${count(page.rows)} rows so far.`
        : " The search goes on with Next."
      : ` Searched all ${count(page.rows)} rows.`;
    return `${count(shown)} row${shown === 1 ? "" : "s"}${total} shown, in sheet order.${where}`;
  }
  const what = query.get("state") === "invalid" ? "invalid rows" : "rows";
  if (shown === 0) return `No ${what}.`;
  const from = (page.offset ?? 0) + 1;
  return `${what === "rows" ? "Rows" : "Invalid rows"} ${count(from)}–${count(from + shown - 1)} of ${count(page.rows)}, in sheet order.`;
}

/**
 * Shows the rows the address asks for; when they cannot be read, the summary says so (not "Loading…").
 * `background`: a live refresh, not the reader's own request: dropped rather than drawn under the
 * reader's keyboard.
 */
async function loadRows(query, background = false) {
  try {
    await readRows(query, background);
  } catch (err) {
    const summary = $("rows-summary");
    if (summary)
      summary.textContent = `The rows could not be read (${err.message}); reload the page to try again.`;
    throw err;
  }
}

/** Counts row readings: only the newest one may fill the table (an earlier, slower search may end last). */
let rowsReading = 0;

async function readRows(query, background) {
  const id = view.id;
  const reading = ++rowsReading;
  const current = () => view.id === id && reading === rowsReading;
  const q = new URLSearchParams({ limit: String(PAGE) });
  for (const k of ["state", "q", "offset"]) if (query.get(k)) q.set(k, query.get(k));
  if (query.get("c")) q.set("cursor", query.get("c"));
  if (!background) $("rows-summary").textContent = "Loading rows…";
  let page = await api(`/api/v1/batches/${encodeURIComponent(id)}/rows?${q}`);
  const data = [...page.data];
  // A search walks the batch a budget at a time: follow it until the page fills, for a while.
  for (let steps = 1; page.nextCursor && data.length < PAGE && steps < SEARCH_STEPS && current(); steps++) {
    q.set("cursor", page.nextCursor);
    q.delete("offset");
    $("rows-summary").textContent =
      `Searching… ${count(page.reached ?? 0)} of ${count(page.rows)} rows looked at.`;
    page = await api(`/api/v1/batches/${encodeURIComponent(id)}/rows?${q}`);
    data.push(...page.data);
  }
  if (!current()) return;
  // A refresh nobody asked for that comes back while the reader types in the rows (a page number, a
  // retry's tick) is dropped: redrawing would throw away what they typed. It is asked for again.
  if (background && $("rows-section")?.contains(document.activeElement)) {
    rowsMoved(id);
    return;
  }
  const shown = { ...page, data, offset: positional(query) ? Number(query.get("offset") ?? 0) : null };
  const body = $("rows").tBodies[0];
  body.replaceChildren(...data.map((r) => rowLine(view.batch, r)));
  if (data.length === 0) {
    const text = page.nextCursor ? "No match yet: search further with Next." : "No rows match.";
    body.append(el("tr", {}, el("td", { colspan: "10", class: "empty" }, text)));
  }
  $("rows-summary").textContent = summaryText(shown, query);
  $("rows-pager").replaceWith(pager(shown, query));
  $("retry-selected").hidden = !may("rows.retry") || !data.some((r) => RETRYABLE.has(r.state));
}

function rowsSection(query) {
  return el(
    "section",
    { "aria-labelledby": "rows-title", id: "rows-section" },
    el("h2", { id: "rows-title" }, "Rows"),
    filters(query),
    el("p", { id: "rows-summary", role: "status" }),
    el("nav", { id: "rows-pager" }),
    el(
      "div",
      { class: "scroll" },
      el(
        "table",
        { id: "rows" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Select")),
            ...[
              "Row",
              "Reference",
              "Payee",
              "Amount",
              "State",
              "Payment",
              "What happened / next step",
              "Attempt",
              "Actions",
            ].map((h) => el("th", { scope: "col" }, h)),
          ),
        ),
        el("tbody"),
      ),
    ),
    el(
      "div",
      { class: "actions" },
      el(
        "button",
        { type: "button", id: "retry-selected", hidden: true, onclick: retrySelected },
        "Retry selected rows",
      ),
    ),
    el("div", { id: "row-detail" }),
  );
}

async function retrySelected() {
  const rows = [...document.querySelectorAll("#rows .pick:checked")].map((c) => Number(c.value));
  if (rows.length === 0) {
    say("Select the failed rows to retry first.", true);
    return;
  }
  try {
    const result = await api(`/api/v1/batches/${view.id}/retry`, { method: "POST", json: { rows } });
    const left = result.leftAlone.map((l) => `row ${l.row}: ${l.reason}`).join("; ");
    say(`Retrying row(s) ${result.retried.join(", ") || "none"}.${left ? ` Left alone: ${left}` : ""}`);
    await loadRows(currentRoute().query);
  } catch (err) {
    say(err.message, true);
  }
}

async function cancelRow(row) {
  const ok = await confirmDialog({
    title: `Cancel the payment of row ${row}?`,
    lines: ["The service still has it scheduled; once canceled, it is not paid."],
    confirm: "Cancel the payment",
    cancel: "Keep it",
  });
  if (!ok) return;
  try {
    const r = await api(`/api/v1/batches/${view.id}/rows/${row}/cancel`, { method: "POST" });
    say(`Row ${row}: payment ${r.paymentId} is ${r.paymentStatus}.`);
    await loadRows(currentRoute().query);
  } catch (err) {
    say(`Row ${row}: ${err.message}`, true);
  }
}

async function showRow(rowNumber) {
  const box = $("row-detail");
  if (!rowNumber) {
    // Back from a row's details by keyboard: the focus returns to that row's link.
    const from = box.contains(document.activeElement) ? box.dataset.row : undefined;
    box.replaceChildren();
    if (from) document.querySelector(`#rows tr[data-row="${from}"] .actions-cell a`)?.focus();
    return;
  }
  box.dataset.row = String(rowNumber);
  const r = await api(`/api/v1/batches/${encodeURIComponent(view.id)}/rows/${encodeURIComponent(rowNumber)}`);
  const back = { ...Object.fromEntries(currentRoute().query) };
  box.replaceChildren(
    el(
      "section",
      { class: "card", "aria-labelledby": "row-title" },
      el("h2", { id: "row-title", tabindex: "-1" }, `Row ${r.row}${r.reference ? ` — ${r.reference}` : ""}`),
      rowFacts(r),
      correctRowForm(view.id, r, async () => {
        await load(view.id);
        await loadRows(currentRoute().query);
        // The row moved on (a new attempt, or held): its facts say so, above the outcome.
        const now = await api(
          `/api/v1/batches/${encodeURIComponent(view.id)}/rows/${encodeURIComponent(rowNumber)}`,
        );
        if ($("row-detail").dataset.row === String(rowNumber)) $("row-facts")?.replaceWith(rowFacts(now));
      }),
      el("p", {}, el("a", { href: href(["batches", view.id], back) }, "Back to the rows")),
    ),
  );
  $("row-title").focus();
}

/** A row's facts and history, drawn again after a correction (the form and its outcome stay). */
function rowFacts(r) {
  return el(
    "div",
    { id: "row-facts" },
    el(
      "dl",
      { class: "facts" },
      el("dt", {}, "State"),
      el("dd", {}, stateBadge(r.state), r.paymentStatus ? ` (payment ${r.paymentStatus})` : ""),
      el("dt", {}, "Payee"),
      el("dd", {}, r.payee ? `${r.payee.name ? `${r.payee.name}, ` : ""}${r.payee.account}` : "—"),
      el("dt", {}, "Amount"),
      el("dd", {}, money(r.amount, r.currency)),
      el("dt", {}, "Payment"),
      el("dd", {}, r.paymentId ?? "none yet"),
      el("dt", {}, "Attempt"),
      el("dd", {}, String(r.attempt ?? "")),
      r.help
        ? [
            el("dt", {}, "What happened"),
            el(
              "dd",
              {},
              `${r.errorCode}: ${r.help.sentence}`,
              r.errorMessage ? el("div", { class: "muted" }, `The service said: ${r.errorMessage}`) : null,
            ),
          ]
        : null,
      r.help ? [el("dt", {}, "What to do"), el("dd", {}, r.help.nextStep)] : null,
      r.waitingFor ? [el("dt", {}, "Waiting for"), el("dd", {}, withTimes(r.waitingFor))] : null,
    ),
    el("h3", {}, "History"),
    el(
      "ol",
      { id: "history-list" },
      ...r.history.map((h) =>
        el(
          "li",
          {},
          timeEl(h.at),
          `: ${h.from ?? "—"} → ${h.to} (attempt ${h.attempt})${h.note ? ` — ${h.note}` : ""}`,
        ),
      ),
    ),
  );
}

// ---- the page ------------------------------------------------------------------------------------

async function load(id) {
  const [b, { approval }] = await Promise.all([
    api(`/api/v1/batches/${encodeURIComponent(id)}`),
    api(`/api/v1/batches/${encodeURIComponent(id)}/approval`),
  ]);
  const before = view.batch;
  view.batch = b;
  view.approval = approval;
  if (before?.id === b.id && before.done !== b.done) rowsMoved(id);
  redraw($("batch-header"), header(b));
  // A pause, resume or cancel changes rows at once (canceled, queued again): the table shows it too.
  $("stop-controls").replaceWith(
    stopControls(b, async () => {
      await load(id);
      await loadRows(currentRoute().query);
    }),
  );
  $("approval-card").replaceWith(approvalCard(b, approval));
  redraw($("progress-card"), progressCard(b));
  showLedger();
}

function showLedger() {
  $("ledger-card")?.replaceWith(
    ledgerCard(view.batch, { answer: view.ledgerAnswer, running: view.ledgerRunning, run: checkLedger }),
  );
}

async function checkLedger() {
  const b = view.batch;
  view.ledgerRunning = true;
  showLedger();
  const answer = await runLedgerCheck(api, b);
  view.ledgerRunning = false;
  if (view.id !== b.id) return;
  if (answer) view.ledgerAnswer = answer;
  // The outcome is kept on the batch: read it back as every other viewer of the batch will see it.
  await load(b.id).catch(() => showLedger());
  $("ledger-check")?.focus();
}

export async function renderBatch(route, { fresh }) {
  const id = route.path[1];
  const rowNumber = route.path[2] === "rows" ? route.path[3] : undefined;
  if (fresh || view.id !== id || !$("rows")) {
    view.id = id;
    view.samples = [];
    view.ledgerAnswer = null;
    view.ledgerRunning = false;
    $("page").replaceChildren(
      el("div", { id: "batch-header" }, el("h1", {}, `Batch ${id}`)),
      el("div", { id: "stop-controls" }),
      el("div", { id: "approval-card" }),
      el("div", { id: "progress-card" }),
      el("div", { id: "ledger-card" }),
      rowsSection(route.query),
    );
    await load(id);
    view.samples.push({ t: Date.now(), sent: sent(view.batch) });
  } else {
    const replaced = filters(route.query);
    $("row-filter").replaceWith(replaced);
  }
  await loadRows(route.query);
  await showRow(rowNumber);
}

/** A live update of a batch (server-sent events): the page follows it when it shows that batch. */
export function updateBatch(b) {
  if (view.id !== b.id || !$("progress-card")) return;
  const before = view.batch;
  view.batch = { ...view.batch, ...b };
  view.samples.push({ t: Date.now(), sent: sent(view.batch) });
  // The rate is taken over the last five minutes.
  while (view.samples.length > 2 && Date.now() - view.samples[0].t > 5 * 60_000) view.samples.shift();
  redraw($("batch-header"), header(view.batch));
  redraw($("progress-card"), progressCard(view.batch));
  if (before?.state !== b.state || before?.pause?.at !== b.pause?.at || !before?.canceled !== !b.canceled)
    void load(b.id);
  else if (JSON.stringify(before?.ledger ?? null) !== JSON.stringify(b.ledger ?? null)) showLedger();
  // A new state (finished, paused, canceled) says something of every row: the table follows at once.
  if (before?.state !== b.state) rowsMoved(b.id, 0);
  else if (before?.done !== b.done) rowsMoved(b.id);
}

/**
 * Rows of the batch moved on (its count of final rows changed): show them again, at most every few
 * seconds (`waitMs` 0: now, for a change of the batch's state), and never under the reader's
 * keyboard: then a few seconds later, until the focus has left the rows. Whoever reads the batch anew
 * (a live update, or the page's own reload after a check or a stop) tells it, so no reading of the
 * count goes unseen.
 */
function rowsMoved(id, waitMs = 3_000) {
  if (view.rowsTimer) {
    if (waitMs > 0) return;
    clearTimeout(view.rowsTimer);
  }
  view.rowsTimer = setTimeout(() => {
    view.rowsTimer = null;
    const rows = $("rows-section");
    // Another page, or another batch, is shown now: nothing to draw.
    if (view.id !== id || !rows) return;
    // Under the reader's keyboard: not now, nor forgotten (the batch may have nothing left to move).
    if (rows.contains(document.activeElement)) rowsMoved(id);
    else loadRows(currentRoute().query, true).catch(() => {});
  }, waitMs);
}
