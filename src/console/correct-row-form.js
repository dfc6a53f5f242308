// "Correct and retry" of one failed, rejected, canceled, returned or error row: a new amount, payee
// or delivery, sent through the API's one gate (POST /rows/{row}/correct). A change of what is paid
// may be held for approval (docs/design.md §3.14); the answer says which, and what changed. Also the
// list of corrected rows waiting in a correction round, for the approval card.

import { $, api, el, may, say } from "./lib.js";

const CORRECTABLE = new Set(["failed", "rejected", "canceled", "returned", "error"]);

function field(id, label, input) {
  return el("div", { class: "field" }, el("label", { for: id }, label), input);
}

/** The form for row `r` of batch `batchId`, or null when it may not be corrected. */
export function correctRowForm(batchId, r, onDone) {
  if (!may("rows.retry") || !CORRECTABLE.has(r.state)) return null;
  const result = el("p", { id: "correct-result", role: "status" });
  const submit = el("button", { type: "submit", id: "correct-submit" }, "Correct and retry");
  // Shown once the gate refused the correction as a possible duplicate: the operator looks at the row
  // it names and confirms that both are meant to be paid (audited as batch.duplicates-confirmed).
  const allowDuplicates = el("input", { type: "checkbox", id: "correct-allow-duplicates" });
  const allowDuplicatesField = el(
    "div",
    { class: "field", id: "correct-allow-duplicates-field", hidden: true },
    el(
      "label",
      { for: "correct-allow-duplicates" },
      allowDuplicates,
      " Pay possible duplicates: I checked the row it names, and both are meant to be paid",
    ),
  );
  let sending = false;
  const sent = () => {
    sending = false;
    submit.removeAttribute("aria-disabled");
  };
  const form = el(
    "form",
    {
      id: "correct-form",
      class: "card",
      "aria-labelledby": "correct-title",
      onsubmit: async (e) => {
        e.preventDefault();
        if (sending) return;
        const json = {};
        for (const name of ["amount", "to_account", "delivery"]) {
          const value = $(`correct-${name}`).value.trim();
          if (value !== "") json[name] = value;
        }
        if (Object.keys(json).length === 0) {
          say("Give a new amount, payee or delivery first.", true);
          return;
        }
        if (!allowDuplicatesField.hidden && allowDuplicates.checked) json.allowPossibleDuplicates = true;
        // The answer can take a while (the row is checked with the service, which a running batch keeps
        // busy): say that it is on its way, and send no second correction of the row meanwhile (marked
        // aria-disabled, not disabled, so that the focus stays on the button).
        sending = true;
        submit.setAttribute("aria-disabled", "true");
        result.replaceChildren(`Correcting row ${r.row}… the outcome shows here.`);
        let answer;
        try {
          answer = await api(
            `/api/v1/batches/${encodeURIComponent(batchId)}/rows/${encodeURIComponent(r.row)}/correct`,
            { method: "POST", json },
          );
          const changed = answer.changes.map(
            (c) => `${c.field} ${c.old || "(blank)"} → ${c.new || "(blank)"}`,
          );
          const label =
            answer.outcome === "held"
              ? "Held for approval"
              : answer.outcome === "retried"
                ? "Retried"
                : answer.outcome === "refused"
                  ? "Refused"
                  : "Left alone";
          // The detail often opens with the outcome's own words: say them once.
          const detail = answer.detail.toLowerCase().startsWith(label.toLowerCase())
            ? answer.detail.slice(label.length)
            : `: ${answer.detail}`;
          result.replaceChildren(
            el("strong", {}, label),
            detail,
            changed.length ? el("div", { class: "muted" }, `Changed: ${changed.join("; ")}`) : null,
          );
          say(
            answer.outcome === "refused"
              ? answer.detail
              : `Row ${r.row}: ${answer.outcome === "held" ? "held for approval" : answer.outcome}.`,
            answer.outcome === "refused",
          );
          if (answer.outcome === "refused" && answer.detail.includes("POSSIBLE_DUPLICATE")) {
            allowDuplicatesField.hidden = false;
          }
          // Answered: the form takes a next correction while the page reads the batch again.
          sent();
          if (answer.outcome !== "refused") await onDone?.();
        } catch (err) {
          // Refused by the server (a 4xx), nothing was corrected; with no answer at all, the outcome is
          // unknown: the row's history says.
          if (!answer)
            result.replaceChildren(
              el("strong", {}, err.status < 500 ? "Not corrected" : "Outcome unknown"),
              `: ${err.message}`,
            );
          say(err.message, true);
        } finally {
          sent();
        }
      },
    },
    el("h3", { id: "correct-title" }, "Correct and retry"),
    el(
      "p",
      { class: "muted" },
      "Change what is paid and start a new attempt. A changed amount, payee or delivery is checked like a new row, and waits for approval when the approval rules say so.",
    ),
    field(
      "correct-amount",
      "New amount",
      el("input", {
        id: "correct-amount",
        name: "amount",
        inputmode: "decimal",
        size: "14",
        placeholder: r.amount ?? "",
      }),
    ),
    field(
      "correct-to_account",
      "New payee account",
      el("input", {
        id: "correct-to_account",
        name: "to_account",
        size: "24",
        placeholder: r.payee?.account ?? "",
      }),
    ),
    field(
      "correct-delivery",
      "New delivery",
      el("input", {
        id: "correct-delivery",
        name: "delivery",
        size: "30",
        placeholder: "unchanged (e.g. same-day-ach)",
      }),
    ),
    allowDuplicatesField,
    submit,
    result,
  );
  return form;
}

/** The corrected rows a correction round waits with, for the approval card (null when none). */
export function heldCorrectionsList(approval) {
  if (approval?.heldFor !== "correction" || !approval.corrections?.length) return null;
  return [
    el("h3", {}, `Corrections waiting (round ${approval.round})`),
    el(
      "ul",
      { id: "held-corrections" },
      ...approval.corrections.map((c) =>
        el(
          "li",
          {},
          `Row ${c.row}, by ${c.by} (${c.via}): `,
          c.changes.map((x) => `${x.field} ${x.old} → ${x.new}`).join("; "),
        ),
      ),
    ),
  ];
}
