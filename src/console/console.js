// The operator console: plain DOM code over /api/v1. Every value from the server goes through
// textContent (never innerHTML), so a sheet's cells can never become markup.

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    me: null,
    csrf: "",
    upload: null,
    batch: null,
    rowsCursor: null,
    batchesCursor: null,
    auditCursor: null,
  };
  const RETRYABLE = new Set(["failed", "canceled", "rejected", "error"]);
  const CANCELABLE = new Set(["submitted", "in-progress"]);

  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false)
        node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c ?? ""));
    return node;
  }

  function say(text, isError = false) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("error", isError);
  }

  async function api(path, options = {}) {
    const headers = { ...(options.headers ?? {}) };
    if (options.method && options.method !== "GET") headers["x-csrf-token"] = state.csrf;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      options.body = JSON.stringify(options.json);
    }
    const res = await fetch(path, { credentials: "same-origin", ...options, headers });
    if (res.status === 401) {
      window.location.assign("/login");
      throw new Error("logged out");
    }
    const body = res.status === 204 ? null : await res.json().catch(() => null);
    if (!res.ok) {
      const err = new Error(body?.error?.message ?? `request failed (${res.status})`);
      err.code = body?.error?.code;
      err.body = body;
      throw err;
    }
    return body;
  }

  function show(section) {
    say("");
    for (const id of ["upload", "batches", "batch", "audit"]) $(id).hidden = id !== section;
    for (const b of document.querySelectorAll("nav [data-show]")) {
      b.setAttribute(
        "aria-current",
        b.dataset.show === section || (section === "batch" && b.dataset.show === "batches")
          ? "page"
          : "false",
      );
    }
    if (section === "batches") loadBatches(true);
    if (section === "audit") loadAudit(true);
    $("main").focus();
  }

  // ---- upload -------------------------------------------------------------------------------------

  async function upload(file) {
    const form = new FormData();
    form.append("file", file);
    const sheet = $("sheet-name").value.trim();
    if (sheet) form.append("sheet", sheet);
    say(`Checking ${file.name}…`);
    try {
      state.upload = await api("/api/v1/sheets", { method: "POST", body: form });
      renderValidation(state.upload);
      say(`${file.name}: ${state.upload.validRows} valid, ${state.upload.invalidRows} invalid rows.`);
    } catch (err) {
      say(`${file.name}: ${err.message}`, true);
    }
  }

  function renderValidation(u) {
    $("validation").hidden = false;
    $("validation-title").textContent = `${u.fileName} (${u.format.toUpperCase()})`;
    $("validation-summary").textContent =
      `${u.rows} rows: ${u.validRows} valid, ${u.invalidRows} invalid` +
      (u.problemCount ? `; ${u.problemCount} problem(s)` : "; no problems");
    const totals = $("totals").tBodies[0];
    totals.replaceChildren(
      ...u.totals.map((t) =>
        el(
          "tr",
          {},
          el("td", {}, t.currency),
          el("td", { class: "num" }, String(t.rows)),
          el("td", { class: "num" }, t.amount),
        ),
      ),
    );
    const links = $("report-links");
    links.replaceChildren();
    if (u.reportUrl) {
      links.append(
        el(
          "a",
          { href: `/api/v1/sheets/${u.id}/report.csv`, download: "" },
          "Download the validation report (CSV)",
        ),
        " · ",
        el("a", { href: `/api/v1/sheets/${u.id}/report.xlsx`, download: "" }, "(XLSX)"),
      );
    }
    $("submit-reject").disabled = u.invalidRows > 0 || u.validRows === 0;
    $("submit-skip").disabled = u.validRows === 0;
    const preview = $("preview");
    preview.tHead.replaceChildren(
      el("tr", {}, el("th", { scope: "col" }, "Row"), ...u.columns.map((c) => el("th", { scope: "col" }, c))),
    );
    preview.tBodies[0].replaceChildren(
      ...u.preview.map((r) => {
        const bad = new Map();
        for (const p of r.problems) bad.set(p.column ?? "", [...(bad.get(p.column ?? "") ?? []), p.message]);
        const tr = el(
          "tr",
          { class: r.problems.length ? "invalid" : "" },
          el("th", { scope: "row" }, String(r.row)),
        );
        r.cells.forEach((cell, i) => {
          const messages = bad.get(u.columns[i]);
          tr.append(
            messages
              ? el(
                  "td",
                  { class: "problem", title: messages.join("\n") },
                  el("span", { "aria-hidden": "true" }, "⚠ "),
                  cell,
                  el("span", { class: "visually-hidden" }, ` (problem: ${messages.join("; ")})`),
                )
              : el("td", {}, cell),
          );
        });
        return tr;
      }),
    );
    $("problems").replaceChildren(
      ...u.problems
        .slice(0, 200)
        .map((p) =>
          el("li", {}, `Row ${p.row ?? "–"}${p.column ? `, ${p.column}` : ""}: ${p.code} — ${p.message}`),
        ),
    );
  }

  async function submit(onInvalid) {
    if (!state.upload) return;
    try {
      const batch = await api("/api/v1/batches", {
        method: "POST",
        json: { sheetId: state.upload.id, onInvalid },
      });
      await openBatch(batch.id);
      say(`Submitted as batch ${batch.id}.`);
    } catch (err) {
      say(
        err.code === "DUPLICATE_FILE" ? `${err.message} (batch ${err.body.error.batchId})` : err.message,
        true,
      );
    }
  }

  // ---- batches ------------------------------------------------------------------------------------

  function progressCell(b) {
    return el(
      "td",
      {},
      el("progress", {
        max: String(b.rows || 1),
        value: String(b.done),
        "aria-label": `${b.done} of ${b.rows} rows final`,
      }),
      ` ${b.done}/${b.rows}`,
    );
  }

  function countsText(b) {
    return (
      Object.entries(b.counts)
        .filter(([, n]) => n > 0)
        .map(([s, n]) => `${s} ${n}`)
        .join(", ") || "—"
    );
  }

  function batchRow(b) {
    return el(
      "tr",
      { "data-batch": b.id },
      el("td", {}, el("button", { type: "button", class: "link", onclick: () => openBatch(b.id) }, b.id)),
      el("td", {}, b.sourceName),
      el("td", { class: `state state-${b.state}` }, b.state),
      progressCell(b),
      el("td", {}, countsText(b)),
      el("td", {}, b.createdBy ?? "—"),
      el("td", {}, new Date(b.createdAt).toLocaleString()),
    );
  }

  async function loadBatches(reset) {
    try {
      if (reset) state.batchesCursor = null;
      const q = new URLSearchParams({ limit: "20" });
      if (state.batchesCursor) q.set("cursor", state.batchesCursor);
      const page = await api(`/api/v1/batches?${q}`);
      const body = $("batch-list").tBodies[0];
      if (reset) body.replaceChildren();
      body.append(...page.data.map(batchRow));
      state.batchesCursor = page.nextCursor;
      $("batches-more").hidden = !page.nextCursor;
    } catch (err) {
      say(err.message, true);
    }
  }

  function renderBatchHeader(b) {
    $("batch-title").textContent = `Batch ${b.id} — ${b.sourceName}`;
    const money = b.totals.map((t) => `${t.currency} ${t.amount}`).join(", ");
    $("batch-summary").replaceChildren(
      el("span", { class: `state state-${b.state}` }, b.state),
      ` · `,
      el("progress", {
        max: String(b.rows || 1),
        value: String(b.done),
        "aria-label": `${b.done} of ${b.rows} rows final`,
      }),
      ` ${b.done} of ${b.rows} rows final (${countsText(b)})${b.invalidRows ? `, ${b.invalidRows} invalid` : ""}; ${money}`,
    );
  }

  async function openBatch(id) {
    try {
      const b = await api(`/api/v1/batches/${encodeURIComponent(id)}`);
      state.batch = b;
      show("batch");
      renderBatchHeader(b);
      $("batch-downloads").replaceChildren(
        el("a", { href: `/api/v1/batches/${b.id}/result.csv`, download: "" }, "Download the result (CSV)"),
        " · ",
        el("a", { href: `/api/v1/batches/${b.id}/result.xlsx`, download: "" }, "(XLSX)"),
        ...(b.uploadId
          ? [
              " · ",
              el("a", { href: `/api/v1/sheets/${b.uploadId}/report.csv`, download: "" }, "Validation report"),
            ]
          : []),
      );
      $("history").hidden = true;
      await loadApproval(b.id);
      await loadRows(true);
    } catch (err) {
      say(err.message, true);
    }
  }

  // ---- approval (maker–checker) --------------------------------------------------------------------

  async function loadApproval(id) {
    const { approval } = await api(`/api/v1/batches/${encodeURIComponent(id)}/approval`);
    $("approval").hidden = !approval;
    if (!approval) return;
    const count = `${approval.approvals.length} of ${approval.required} approval(s)`;
    const status =
      approval.status === "awaiting-approval"
        ? `waiting for approval (${count}); expires ${approval.expiresAt}; nothing is paid until approved`
        : approval.status === "rejected"
          ? `rejected by ${approval.decidedBy} at ${approval.decidedAt}: ${approval.reason ?? ""}`
          : approval.status === "expired"
            ? `expired at ${approval.decidedAt ?? approval.expiresAt} (${count}); no row was paid`
            : `approved at ${approval.decidedAt} (${count})`;
    $("approval-summary").replaceChildren(
      el("span", { class: `state state-${approval.status}` }, approval.status),
      ` · ${status} · submitted by ${approval.submittedBy} at ${approval.requestedAt}`,
    );
    $("approval-list").replaceChildren(
      ...approval.approvals.map((a) => el("li", {}, `approved by ${a.by} at ${a.at}`)),
    );
    // The server decides (role, never the submitter); the form is only offered where it could succeed.
    $("approval-form").hidden = !(
      approval.status === "awaiting-approval" &&
      state.me.permissions.includes("batches.approve") &&
      state.me.name !== approval.submittedBy
    );
  }

  async function decide(action) {
    const id = state.batch?.id;
    if (!id) return;
    const reason = $("reject-reason").value.trim();
    if (action === "reject" && !reason) {
      say("Say why the batch is rejected (the reason goes to the result file and the audit trail).", true);
      $("reject-reason").focus();
      return;
    }
    try {
      const { outcome } = await api(`/api/v1/batches/${encodeURIComponent(id)}/${action}`, {
        method: "POST",
        json: action === "reject" ? { reason } : {},
      });
      await openBatch(id);
      say(
        outcome === "approved"
          ? "Approved: the batch's rows are queued for payment."
          : outcome === "recorded"
            ? "Your approval is recorded; the batch waits for more approvers."
            : outcome === "rejected"
              ? "Rejected: every row is canceled."
              : `Nothing changed (${outcome}).`,
      );
    } catch (err) {
      say(err.message, true);
    }
  }

  function rowLine(r) {
    const mayRetry = state.me.permissions.includes("rows.retry") && RETRYABLE.has(r.state);
    const mayCancel = state.me.permissions.includes("rows.cancel") && r.paymentId && CANCELABLE.has(r.state);
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
      el("th", { scope: "row" }, String(r.row)),
      el("td", {}, r.reference ?? ""),
      el("td", { class: "num" }, `${r.amount} ${r.currency}`),
      el("td", { class: `state state-${r.state}` }, r.state),
      el("td", {}, r.paymentId ?? ""),
      el("td", {}, r.errorCode ? `${r.errorCode}: ${r.errorMessage ?? ""}` : ""),
      el("td", { class: "num" }, String(r.attempt)),
      el(
        "td",
        {},
        el(
          "button",
          { type: "button", onclick: () => showHistory(r.row) },
          "History",
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

  async function loadRows(reset) {
    const b = state.batch;
    if (!b) return;
    if (reset) state.rowsCursor = null;
    const q = new URLSearchParams({ limit: "100" });
    const st = $("state-filter").value;
    const text = $("q").value.trim();
    if (st) q.set("state", st);
    if (text) q.set("q", text);
    if (state.rowsCursor) q.set("cursor", state.rowsCursor);
    try {
      const page = await api(`/api/v1/batches/${b.id}/rows?${q}`);
      const body = $("rows").tBodies[0];
      if (reset) body.replaceChildren();
      body.append(...page.data.map(rowLine));
      state.rowsCursor = page.nextCursor;
      $("rows-more").hidden = !page.nextCursor;
      if (reset && page.data.length === 0 && !page.nextCursor)
        body.append(el("tr", {}, el("td", { colspan: "9" }, "No rows match.")));
    } catch (err) {
      say(err.message, true);
    }
  }

  async function showHistory(row) {
    try {
      const r = await api(`/api/v1/batches/${state.batch.id}/rows/${row}`);
      $("history").hidden = false;
      $("history-title").textContent = `History of row ${r.row} (${r.reference ?? "no reference"})`;
      $("history-list").replaceChildren(
        ...r.history.map((h) =>
          el(
            "li",
            {},
            `${new Date(h.at).toLocaleString()}: ${h.from ?? "—"} → ${h.to} (attempt ${h.attempt})${h.note ? ` — ${h.note}` : ""}`,
          ),
        ),
      );
      $("history-title").focus();
    } catch (err) {
      say(err.message, true);
    }
  }

  async function retrySelected() {
    const rows = [...document.querySelectorAll("#rows .pick:checked")].map((c) => Number(c.value));
    if (rows.length === 0) {
      say("Select the failed rows to retry first.", true);
      return;
    }
    try {
      const result = await api(`/api/v1/batches/${state.batch.id}/retry`, { method: "POST", json: { rows } });
      const left = result.leftAlone.map((l) => `row ${l.row}: ${l.reason}`).join("; ");
      say(`Retrying row(s) ${result.retried.join(", ") || "none"}.${left ? ` Left alone: ${left}` : ""}`);
      await loadRows(true);
    } catch (err) {
      say(err.message, true);
    }
  }

  async function cancelRow(row) {
    if (!window.confirm(`Cancel the payment of row ${row}?`)) return;
    try {
      const r = await api(`/api/v1/batches/${state.batch.id}/rows/${row}/cancel`, { method: "POST" });
      say(`Row ${row}: payment ${r.paymentId} is ${r.paymentStatus}.`);
      await loadRows(true);
    } catch (err) {
      say(`Row ${row}: ${err.message}`, true);
    }
  }

  // ---- live progress ------------------------------------------------------------------------------

  function listen() {
    const events = new EventSource("/api/v1/events");
    events.addEventListener("batch", (e) => {
      const b = JSON.parse(e.data);
      const line = document.querySelector(`#batch-list tr[data-batch="${CSS.escape(b.id)}"]`);
      if (line) line.replaceWith(batchRow(b));
      if (state.batch?.id === b.id) {
        const finishedNow = b.state !== state.batch.state || b.done !== state.batch.done;
        state.batch = { ...state.batch, ...b };
        renderBatchHeader(state.batch);
        if (finishedNow && !$("batch").hidden) loadRows(true);
      }
    });
  }

  // ---- audit --------------------------------------------------------------------------------------

  async function loadAudit(reset) {
    try {
      if (reset) state.auditCursor = null;
      const q = new URLSearchParams({ limit: "50" });
      if (state.auditCursor) q.set("cursor", state.auditCursor);
      const page = await api(`/api/v1/audit?${q}`);
      const body = $("audit-list").tBodies[0];
      if (reset) body.replaceChildren();
      body.append(
        ...page.data.map((e) =>
          el(
            "tr",
            {},
            el("td", {}, new Date(e.at).toLocaleString()),
            el("td", {}, `${e.actor.name} (${e.actor.kind}${e.actor.role ? `, ${e.actor.role}` : ""})`),
            el("td", {}, e.action),
            el("td", {}, e.target ?? ""),
            el("td", {}, e.from),
            el("td", {}, e.outcome),
          ),
        ),
      );
      state.auditCursor = page.nextCursor;
      $("audit-more").hidden = !page.nextCursor;
    } catch (err) {
      say(err.message, true);
    }
  }

  // ---- start --------------------------------------------------------------------------------------

  async function start() {
    $("approve").addEventListener("click", () => decide("approve"));
    $("reject").addEventListener("click", () => decide("reject"));
    state.me = await api("/api/v1/session");
    state.csrf = state.me.csrfToken;
    $("who").textContent = `${state.me.name} (${state.me.role})`;
    const may = (p) => state.me.permissions.includes(p);
    $("nav-upload").hidden = !may("sheets.upload");
    $("nav-audit").hidden = !may("audit.read");
    $("nav-queues").hidden = !may("queues.view");
    for (const b of document.querySelectorAll("nav [data-show]"))
      b.addEventListener("click", () => show(b.dataset.show));
    $("logout").addEventListener("click", async () => {
      await api("/api/v1/session", { method: "DELETE" }).catch(() => {});
      window.location.assign("/login");
    });
    const file = $("file");
    file.addEventListener("change", () => file.files[0] && upload(file.files[0]));
    const zone = $("dropzone");
    zone.addEventListener("dragover", (e) => {
      e.preventDefault();
      zone.classList.add("over");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      zone.classList.remove("over");
      if (e.dataTransfer.files[0]) upload(e.dataTransfer.files[0]);
    });
    $("submit-reject").addEventListener("click", () => submit("reject"));
    $("submit-skip").addEventListener("click", () => submit("skip"));
    $("row-filter").addEventListener("submit", (e) => {
      e.preventDefault();
      loadRows(true);
    });
    $("rows-more").addEventListener("click", () => loadRows(false));
    $("batches-more").addEventListener("click", () => loadBatches(false));
    $("audit-more").addEventListener("click", () => loadAudit(false));
    $("retry-selected").addEventListener("click", retrySelected);
    $("retry-selected").hidden = !may("rows.retry");
    listen();
    show(may("sheets.upload") ? "upload" : "batches");
  }

  start().catch((err) => say(err.message, true));
})();
