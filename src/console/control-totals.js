// Control totals in the upload view: the rows and sums per currency the person uploading vouches
// for, sent with the sheet (`expectRows`, `expectTotals`) and checked against its valid rows; the
// upload then shows what was declared, and a mismatch among the sheet's problems.

import { el } from "./lib.js";

/** The two optional fields of the drop zone. */
export function controlTotalFields() {
  return el(
    "p",
    { class: "field", id: "control-totals" },
    el("label", { for: "expect-rows" }, "Expected rows (optional) "),
    el("input", { id: "expect-rows", type: "number", min: "0", step: "1", size: "8", inputmode: "numeric" }),
    " ",
    el("label", { for: "expect-totals" }, "Expected totals (optional, e.g. USD:125000.00; EUR:900.00) "),
    el("input", { id: "expect-totals", type: "text", size: "30", "aria-describedby": "control-totals-help" }),
    el(
      "span",
      { id: "control-totals-help", class: "muted" },
      " The sheet is refused unless its valid rows match these.",
    ),
  );
}

/** Adds the declared totals typed in the drop zone to the upload's form. */
export function appendControlTotals(form) {
  const rows = document.getElementById("expect-rows")?.value.trim();
  const totals = document.getElementById("expect-totals")?.value.trim();
  if (rows) form.append("expectRows", rows);
  if (totals) form.append("expectTotals", totals);
}

/** One line saying what was declared with the upload, or nothing. */
export function declaredLine(u) {
  const d = u.declared;
  if (!d) return null;
  const parts = [];
  if (d.rows !== null) parts.push(`${d.rows} rows`);
  for (const t of d.totals) parts.push(`${t.currency} ${t.amount}`);
  return el("p", { id: "declared-totals" }, `Control totals declared with the upload: ${parts.join(", ")}.`);
}
