// Upload: a sheet (with its attachment files, or a .zip of both) is validated at once; its rows page
// with the problems first, a wrong cell is corrected in place and its row checked again, a sheet with
// other headers is mapped to ours; then it is submitted. The upload has its own address
// (#/uploads/<id>), so a reload or a link comes back to it.

import { appendControlTotals, controlTotalFields, declaredLine } from "./control-totals.js";
import { $, ApiCallError, api, confirmDialog, count, el, go, href, may, money, say, timeEl } from "./lib.js";

const PAGE = 50;
const SHEET = /\.(csv|txt|xlsx|zip)$/i;

function dropzone() {
  const input = el("input", {
    id: "file",
    type: "file",
    multiple: true,
    accept: ".csv,.xlsx,.txt,.zip,application/pdf,image/*",
    class: "visually-hidden",
    "aria-describedby": "file-help",
    onchange: (e) => e.target.files.length && upload([...e.target.files]),
  });
  const zone = el(
    "div",
    { id: "dropzone", class: "dropzone" },
    el(
      "p",
      { id: "file-help" },
      "Drop a CSV or XLSX sheet here (with the files its attachment column names, or a .zip of both), or",
    ),
    input,
    el("label", { for: "file", class: "button primary" }, "Choose files…"),
    el(
      "p",
      { class: "field" },
      el("label", { for: "sheet-name" }, "Worksheet (XLSX, optional) "),
      el("input", { id: "sheet-name", type: "text", size: "16" }),
    ),
    controlTotalFields(),
    el(
      "p",
      { class: "muted" },
      "No sheet yet? Start from the template: ",
      el("a", { href: "/api/v1/template.xlsx", download: "" }, "template (XLSX)"),
      " · ",
      el("a", { href: "/api/v1/template.csv", download: "" }, "template (CSV)"),
      ".",
    ),
  );
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    if (e.dataTransfer.files.length) upload([...e.dataTransfer.files]);
  });
  return zone;
}

async function upload(files) {
  const sheets = files.filter((f) => SHEET.test(f.name));
  if (sheets.length !== 1) {
    say(
      sheets.length === 0
        ? "Choose a .csv or .xlsx sheet (or a .zip of it and its files) among the files."
        : `Choose one sheet at a time (${sheets.map((f) => f.name).join(", ")}).`,
      true,
    );
    return;
  }
  const form = new FormData();
  form.append("file", sheets[0]);
  for (const f of files) if (f !== sheets[0]) form.append("attachments", f);
  const sheet = $("sheet-name").value.trim();
  if (sheet) form.append("sheet", sheet);
  appendControlTotals(form);
  say(`Checking ${sheets[0].name}${files.length > 1 ? ` and ${files.length - 1} file(s)` : ""}…`);
  try {
    const u = await api("/api/v1/sheets", { method: "POST", body: form });
    go(href(["uploads", u.id]), {
      message: {
        text: u.needsMapping
          ? `${u.fileName}: its columns are not ours; match them below, then its rows are checked.`
          : `${u.fileName}: ${count(u.validRows)} valid, ${count(u.invalidRows)} invalid rows.`,
      },
    });
  } catch (err) {
    say(`${sheets[0].name}: ${err.message}`, true);
  }
}

// ---- one upload ----------------------------------------------------------------------------------

function summary(u) {
  const totals = u.totals.map((t) =>
    el(
      "tr",
      {},
      el("th", { scope: "row" }, t.currency),
      el("td", { class: "num" }, count(t.rows)),
      el("td", { class: "num" }, money(t.amount, t.currency)),
    ),
  );
  return el(
    "div",
    { id: "upload-summary" },
    el("h1", { id: "validation-title" }, `${u.fileName} (${u.format.toUpperCase()})`),
    el(
      "p",
      { id: "validation-summary" },
      u.needsMapping && u.rows === 0
        ? "Its rows are checked once its columns are matched to ours"
        : [
            `${count(u.rows)} rows: ${count(u.validRows)} valid, ${count(u.invalidRows)} invalid`,
            u.problemCount ? `; ${count(u.problemCount)} problem(s)` : "; no problems",
          ],
      u.editedRows ? `; ${count(u.editedRows)} row(s) corrected here (submitted as corrected)` : "",
      `. Uploaded by ${u.uploadedBy}, `,
      timeEl(u.uploadedAt),
      ".",
    ),
    declaredLine(u),
    u.attachments.length ? el("p", {}, `Files that came with it: ${u.attachments.join(", ")}.`) : null,
    totals.length
      ? el(
          "table",
          { id: "totals", class: "compact" },
          el("caption", {}, "Totals of the valid rows per currency"),
          el(
            "thead",
            {},
            el("tr", {}, ...["Currency", "Rows", "Amount"].map((h) => el("th", { scope: "col" }, h))),
          ),
          el("tbody", {}, ...totals),
        )
      : null,
    u.reportUrl
      ? el(
          "p",
          { id: "report-links" },
          el(
            "a",
            { href: `/api/v1/sheets/${u.id}/report.csv`, download: "" },
            "Download the validation report (CSV)",
          ),
          " · ",
          el("a", { href: `/api/v1/sheets/${u.id}/report.xlsx`, download: "" }, "(XLSX)"),
          u.editedRows ? " (as the file came, before corrections)" : "",
        )
      : null,
  );
}

function mappingForm(u) {
  const options = (selected) => [
    el("option", { value: "" }, "— not in this sheet —"),
    ...u.columns.map((h) => el("option", { value: h, selected: h === selected }, h)),
  ];
  const guess = (ours) => u.columns.find((h) => h.trim().toLowerCase() === ours) ?? "";
  return el(
    "section",
    { class: "card", "aria-labelledby": "mapping-title", id: "mapping" },
    el("h2", { id: "mapping-title" }, "Match your columns to ours"),
    el(
      "p",
      {},
      u.sheetProblems
        .map((p) =>
          p.code === "HEADER_NOT_FOUND"
            ? "No row at the top of this sheet names our columns (at least to_account and amount)."
            : p.message.replace(/([^.])$/, "$1."),
        )
        .join(" "),
      " Say which of your columns holds each of ours; the sheet is checked again, and the next sheet with the same headers is matched the same way.",
    ),
    el(
      "form",
      {
        id: "mapping-form",
        class: "grid",
        onsubmit: async (e) => {
          e.preventDefault();
          const columns = {};
          for (const s of e.target.querySelectorAll("select")) if (s.value) columns[s.name] = s.value;
          try {
            const mapped = await api(`/api/v1/sheets/${u.id}/mapping`, { method: "PUT", json: { columns } });
            say(
              `Columns matched: ${count(mapped.validRows)} valid, ${count(mapped.invalidRows)} invalid rows.`,
            );
            await renderOne(mapped.id, new URLSearchParams(), true);
          } catch (err) {
            say(err.message, true);
          }
        },
      },
      ...u.ourColumns.map((ours) =>
        el(
          "p",
          { class: "field" },
          el("label", { for: `map-${ours}` }, ours),
          el("select", { id: `map-${ours}`, name: ours }, ...options(u.mapping?.[ours] ?? guess(ours))),
        ),
      ),
      el("p", {}, el("button", { type: "submit", class: "primary" }, "Use these columns")),
    ),
  );
}

function rowLine(u, r) {
  const byColumn = new Map();
  for (const p of r.problems)
    byColumn.set(p.column ?? "", [...(byColumn.get(p.column ?? "") ?? []), `${p.code}: ${p.message}`]);
  const editable = !u.batchId && may("sheets.upload") && (r.problems.length > 0 || r.edited.length > 0);
  const cells = u.columns.map((column, i) => {
    const problems = byColumn.get(column);
    const id = `cell-${r.row}-${i}`;
    if (!editable) {
      return el(
        "td",
        { class: problems ? "problem" : "" },
        r.cells[i],
        problems ? el("div", { class: "why" }, problems.join("; ")) : null,
      );
    }
    return el(
      "td",
      { class: `${problems ? "problem" : ""}${r.edited.includes(column) ? " edited" : ""}` },
      el("input", {
        id,
        class: "cell",
        "data-column": column,
        value: r.cells[i],
        size: String(Math.min(24, Math.max(6, r.cells[i].length + 1))),
        "aria-label": `Row ${r.row}, ${column}`,
        "aria-invalid": problems ? "true" : "false",
        "aria-describedby": problems ? `${id}-why` : null,
        onkeydown: (e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            checkRow(u, r.row);
          }
        },
      }),
      problems ? el("div", { class: "why", id: `${id}-why` }, problems.join("; ")) : null,
    );
  });
  const rowProblems = byColumn.get("");
  return el(
    "tr",
    { "data-row": String(r.row), class: r.valid ? (r.edited.length ? "fixed" : "") : "invalid" },
    el("th", { scope: "row", class: "num" }, String(r.row)),
    el(
      "td",
      {},
      r.valid
        ? el("span", { class: "state state-completed" }, r.edited.length ? "corrected" : "valid")
        : el("span", { class: "state state-failed" }, "invalid"),
      rowProblems ? el("div", { class: "why" }, rowProblems.join("; ")) : null,
    ),
    ...cells,
    el(
      "td",
      {},
      editable
        ? el(
            "button",
            { type: "button", onclick: () => checkRow(u, r.row) },
            "Check row",
            el("span", { class: "visually-hidden" }, ` ${r.row}`),
          )
        : "",
    ),
  );
}

async function checkRow(u, rowNumber) {
  const line = document.querySelector(`#preview tr[data-row="${rowNumber}"]`);
  const cells = {};
  for (const input of line.querySelectorAll("input.cell")) {
    if (input.value !== input.defaultValue) cells[input.dataset.column] = input.value;
  }
  if (Object.keys(cells).length === 0) {
    say(`Row ${rowNumber}: change a cell first.`, true);
    return;
  }
  try {
    const { upload: after, rows } = await api(`/api/v1/sheets/${u.id}/rows`, {
      method: "PATCH",
      json: { rows: [{ row: rowNumber, cells }] },
    });
    const r = rows[0];
    const replaced = rowLine(after, r);
    line.replaceWith(replaced);
    $("upload-summary").replaceWith(summary(after));
    $("upload-actions").replaceWith(actions(after));
    say(
      r.valid
        ? `Row ${rowNumber} is valid now.`
        : `Row ${rowNumber} still has problems: ${r.problems.map((p) => p.message).join("; ")}`,
      !r.valid,
    );
    (replaced.querySelector("input[aria-invalid='true']") ?? replaced.querySelector("button"))?.focus();
  } catch (err) {
    say(`Row ${rowNumber}: ${err.message}`, true);
  }
}

function actions(u) {
  if (u.batchId) {
    return el(
      "p",
      { id: "upload-actions" },
      "Submitted as ",
      el("a", { href: href(["batches", u.batchId]) }, `batch ${u.batchId}`),
      ".",
    );
  }
  // Nothing to submit until the columns are matched.
  if (!may("batches.submit") || u.needsMapping) return el("p", { id: "upload-actions" });
  const totals = u.totals.map((t) => money(t.amount, t.currency)).join(" + ") || "nothing";
  return el(
    "div",
    { class: "actions", id: "upload-actions" },
    possibleDuplicatesBox(u),
    el(
      "button",
      {
        type: "button",
        id: "submit-reject",
        class: "primary",
        disabled: u.invalidRows > 0 || u.validRows === 0,
        onclick: () => submit(u, "reject", totals),
      },
      "Submit (nothing is paid if a row is invalid)",
    ),
    el(
      "button",
      {
        type: "button",
        id: "submit-skip",
        disabled: u.validRows === 0,
        onclick: () => submit(u, "skip", totals),
      },
      "Submit the valid rows, skip the invalid ones",
    ),
  );
}

/**
 * The operator's confirmation that rows flagged POSSIBLE_DUPLICATE are meant to be paid (sent as
 * allowPossibleDuplicates; the server validates again and records the confirmation in the audit trail).
 * Checked, it lets the sheet be submitted whole even though those rows show as invalid here.
 */
function possibleDuplicatesBox(u) {
  const box = el("input", {
    type: "checkbox",
    id: "allow-possible-duplicates",
    onchange: () => {
      $("submit-reject").disabled = (u.invalidRows > 0 && !box.checked) || u.validRows + u.invalidRows === 0;
    },
  });
  return el(
    "label",
    { for: "allow-possible-duplicates", id: "allow-possible-duplicates-label" },
    box,
    " Pay possible duplicates too (the same payee and amount as another row or a recent batch): I checked them",
  );
}

async function submit(u, onInvalid, totals) {
  const allowPossibleDuplicates = $("allow-possible-duplicates")?.checked === true;
  const ok = await confirmDialog({
    title: "Submit this sheet?",
    lines: [
      `${count(u.validRows)} rows paying ${totals} from ${u.fileName}.`,
      onInvalid === "skip" && u.invalidRows ? `${count(u.invalidRows)} invalid rows are left out.` : "",
      u.editedRows ? `The sheet is submitted with your ${count(u.editedRows)} corrected row(s).` : "",
      allowPossibleDuplicates
        ? "Rows flagged as possible duplicates are paid too (recorded in the audit trail)."
        : "",
    ].filter(Boolean),
    confirm: "Submit",
  });
  if (!ok) return;
  try {
    const batch = await api("/api/v1/batches", {
      method: "POST",
      json: { sheetId: u.id, onInvalid, allowPossibleDuplicates },
    });
    go(href(["batches", batch.id]), {
      message: {
        text:
          batch.state === "awaiting-approval"
            ? `Submitted as batch ${batch.id}; it waits for approval: send an approver its link.`
            : `Submitted as batch ${batch.id}.`,
      },
    });
  } catch (err) {
    if (err instanceof ApiCallError && err.code === "DUPLICATE_FILE") {
      const id = err.body.error.batchId;
      say(
        [
          "This file was already submitted as ",
          el("a", { href: href(["batches", id]) }, `batch ${id}`),
          "; nothing was submitted again.",
        ],
        true,
      );
    } else {
      say(err.message, true);
    }
  }
}

async function loadRows(u, query) {
  const offset = Math.max(0, Number(query.get("offset") ?? 0) || 0);
  const only = query.get("only") === "1";
  const page = await api(
    `/api/v1/sheets/${u.id}/rows?${new URLSearchParams({ offset: String(offset), limit: String(PAGE), problems: only ? "only" : "first" })}`,
  );
  const to = (extra) => href(["uploads", u.id], { only: only ? "1" : "", ...extra });
  $("preview").tBodies[0].replaceChildren(...page.data.map((r) => rowLine(u, r)));
  if (page.data.length === 0)
    $("preview").tBodies[0].append(
      el(
        "tr",
        {},
        el(
          "td",
          { colspan: String(u.columns.length + 3), class: "empty" },
          only ? "No row has a problem." : "The sheet has no rows.",
        ),
      ),
    );
  const pages = Math.max(1, Math.ceil(page.total / PAGE));
  $("rows-pager").replaceWith(
    el(
      "nav",
      { class: "pager", id: "rows-pager", "aria-label": "Pages of the sheet's rows" },
      `${only ? "Rows with problems" : "Rows, those with problems first"}: ${page.total ? `${count(offset + 1)}–${count(offset + page.data.length)} of ${count(page.total)}` : "none"}. `,
      offset > 0
        ? el("a", { href: to({ offset: Math.max(0, offset - PAGE) }), id: "rows-prev" }, "← Previous")
        : null,
      " ",
      offset + PAGE < page.total
        ? el("a", { href: to({ offset: offset + PAGE }), id: "rows-next" }, "Next →")
        : null,
      pages > 1 ? ` (page ${Math.floor(offset / PAGE) + 1} of ${count(pages)})` : "",
    ),
  );
}

async function renderOne(id, query, fresh) {
  const u = await api(`/api/v1/sheets/${encodeURIComponent(id)}`);
  const only = query.get("only") === "1";
  if (fresh || !$("preview") || $("upload").dataset.id !== id) {
    $("page").replaceChildren(
      el(
        "section",
        { id: "upload", "data-id": id, "aria-labelledby": "validation-title" },
        el("p", {}, el("a", { href: "#/upload" }, "← Upload another sheet")),
        summary(u),
        u.needsMapping ? mappingForm(u) : null,
        actions(u),
        u.rows
          ? el(
              "section",
              { "aria-labelledby": "rows-title" },
              el("h2", { id: "rows-title" }, "Rows"),
              el(
                "p",
                { class: "filters" },
                el("input", {
                  type: "checkbox",
                  id: "only-problems",
                  checked: only,
                  onchange: (e) => go(href(["uploads", id], { only: e.target.checked ? "1" : "" })),
                }),
                el("label", { for: "only-problems" }, "Show only rows with problems"),
                u.invalidRows && !u.batchId
                  ? el(
                      "span",
                      { class: "muted" },
                      " Correct a cell, then press Enter or “Check row”: the row is checked again at once.",
                    )
                  : null,
              ),
              el("nav", { id: "rows-pager" }),
              el(
                "div",
                { class: "scroll" },
                el(
                  "table",
                  { id: "preview" },
                  el(
                    "caption",
                    { class: "visually-hidden" },
                    "The sheet's rows; cells with a problem are marked and can be corrected",
                  ),
                  el(
                    "thead",
                    {},
                    el(
                      "tr",
                      {},
                      el("th", { scope: "col" }, "Row"),
                      el("th", { scope: "col" }, "Check"),
                      ...u.columns.map((c) => el("th", { scope: "col" }, c)),
                      el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")),
                    ),
                  ),
                  el("tbody"),
                ),
              ),
            )
          : null,
      ),
    );
  }
  if (u.rows) await loadRows(u, query);
}

export async function renderUpload(route, { fresh }) {
  if (route.path[0] === "uploads" && route.path[1]) {
    await renderOne(route.path[1], route.query, fresh);
    return;
  }
  $("page").replaceChildren(
    el(
      "section",
      { id: "upload", "aria-labelledby": "upload-title" },
      el("h1", { id: "upload-title" }, "Upload a payout sheet"),
      dropzone(),
    ),
  );
}
