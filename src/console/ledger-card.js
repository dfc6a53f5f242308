// The batch held against the service's ledger (as `payouts audit`): the last check's outcome kept on the
// batch (matches, or its differences by kind, and when), a button that runs it again, and, after a run
// in this page, the differences with links to their rows. The check reads every payment the service
// holds for the batch, a page of 50 at a time, so it is run on request, never on its own.

import { count, el, href, may, say, timeEl } from "./lib.js";

/** What each kind of difference means, in words (the kinds are src/ledger-audit's). */
const KIND_WORDS = {
  "missing-payment": "the row records a payment the service does not have",
  "unrecorded-payment": "the service has a payment the row does not record",
  "second-payment": "the service has a second payment for the row",
  "payment-without-row": "a payment names this batch but no row of it",
  "amount-differs": "the amount differs",
  "currency-differs": "the currency differs",
  "payee-differs": "the payee differs",
  "state-differs": "the state differs",
};

/** Differences the console lists after a run (the rest: `payouts audit <batch>` writes them all). */
const LISTED = 100;

/** Rows are only paid once the batch runs; before that there is nothing to check. */
const checkable = (b) => b.state === "running" || b.state === "finished";

function kindsList(byKind) {
  const kinds = Object.entries(byKind ?? {}).filter(([, n]) => n > 0);
  if (kinds.length === 0) return null;
  return el(
    "ul",
    { id: "ledger-kinds" },
    ...kinds.map(([k, n]) => el("li", {}, `${count(n)} × ${KIND_WORDS[k] ?? k} (${k})`)),
  );
}

function outcome(l) {
  if (!l) {
    return el(
      "p",
      { id: "ledger-summary" },
      "Not checked yet. The check reads every payment the service holds for this batch and holds it against the rows.",
    );
  }
  const differences = l.differences;
  return el(
    "p",
    { id: "ledger-summary" },
    differences === 0
      ? [
          el("span", { class: "state state-completed" }, "matches"),
          ` All ${count(l.rows)} rows agree with the service's ledger (${count(l.payments)} payments). Checked `,
        ]
      : [
          el(
            "span",
            { class: "state state-failed" },
            `${count(differences)} difference${differences === 1 ? "" : "s"}`,
          ),
          ` ${count(l.matched)} of ${count(l.rows)} rows agree with the service's ledger (${count(l.payments)} payments); ${count(differences)} difference${differences === 1 ? "" : "s"}. Checked `,
        ],
    timeEl(l.at),
    ".",
  );
}

function differencesTable(b, answer) {
  if (answer.differences.length === 0) return null;
  return el(
    "div",
    { class: "scroll" },
    el(
      "table",
      { class: "compact", id: "ledger-differences" },
      el(
        "caption",
        {},
        answer.truncated
          ? `The first ${count(answer.differences.length)} differences; \`payouts audit ${b.id}\` writes them all.`
          : "The differences, by row",
      ),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["Row", "What differs", "Reference", "Payment", "The row says", "The ledger says"].map((h) =>
            el("th", { scope: "col" }, h),
          ),
        ),
      ),
      el(
        "tbody",
        {},
        ...answer.differences.map((d) =>
          el(
            "tr",
            {},
            el(
              "td",
              { class: "num" },
              d.row === null
                ? "—"
                : el("a", { href: href(["batches", b.id, "rows", String(d.row)]) }, String(d.row)),
            ),
            el("td", {}, KIND_WORDS[d.kind] ?? d.kind, el("div", { class: "muted" }, d.message)),
            el("td", {}, d.reference ?? ""),
            el("td", {}, d.paymentId ?? ""),
            el("td", {}, d.expected ?? ""),
            el("td", {}, d.found ?? ""),
          ),
        ),
      ),
    ),
  );
}

/**
 * The card for batch `b`. `answer` is the last run's answer in this page (differences listed), if any;
 * `run` runs the check (the batch page passes its API call, then shows the card again).
 */
export function ledgerCard(b, { answer = null, running = false, run } = {}) {
  if (!checkable(b) && !b.ledger) return el("div", { id: "ledger-card", hidden: true });
  const l = b.ledger;
  const detailsHere = answer && l && answer.at === l.at;
  return el(
    "section",
    { class: "card", id: "ledger-card", "aria-labelledby": "ledger-title" },
    el("h2", { id: "ledger-title" }, "Ledger check"),
    outcome(l),
    l?.differences ? kindsList(l.byKind) : null,
    l?.differences && l.behind > 0
      ? el(
          "p",
          { id: "ledger-behind" },
          `${count(l.behind)} of these row${l.behind === 1 ? " was" : "s were"} only behind ${l.behind === 1 ? "its" : "their"} payment: the service showed a newer state (returned, or settled, since the row's last look). The worker was asked to make ${l.behind === 1 ? "it" : "them"} follow; check again.`,
        )
      : null,
    detailsHere ? differencesTable(b, answer) : null,
    l?.differences && !detailsHere
      ? el("p", { class: "muted" }, "Check again to list the differences with their rows.")
      : null,
    // Differences that are only rows behind their payment need no one to open the rows.
    l?.differences && !(l.behind >= l.differences)
      ? el(
          "p",
          { class: "muted" },
          "Next: open each row; a payment the row does not record, or a second one, may mean a payee was paid twice (docs/ledger.md says what each kind means).",
        )
      : null,
    may("batches.read") && checkable(b)
      ? el(
          "p",
          {},
          el(
            "button",
            { type: "button", id: "ledger-check", disabled: running, onclick: () => run?.() },
            running
              ? "Checking the ledger…"
              : l
                ? "Check the ledger again"
                : "Check against the service's ledger",
          ),
          running
            ? el(
                "span",
                { class: "muted" },
                ` Reading the service's payments for ${count(b.rows)} rows, 50 a page.`,
              )
            : null,
        )
      : null,
  );
}

/** Runs the check for batch `b` through `api`; the answer (differences listed), or null after an error. */
export async function runLedgerCheck(api, b) {
  try {
    const answer = await api(`/api/v1/batches/${encodeURIComponent(b.id)}/audit?limit=${LISTED}`);
    say(
      answer.matches
        ? `Ledger check: all ${count(answer.rows)} rows agree with the service's ledger.`
        : `Ledger check: ${count(Object.values(answer.byKind).reduce((a, n) => a + n, 0))} differences from the service's ledger; they are listed under "Ledger check".` +
            (answer.behind > 0
              ? ` ${count(answer.behind)} only wait for the worker to follow their payment.`
              : ""),
      !answer.matches,
    );
    return answer;
  } catch (err) {
    say(`Ledger check: ${err.message}`, true);
    return null;
  }
}
