// Stopping a batch in its view: a banner when it is paused (by an operator or by the circuit breaker,
// saying why) or canceled, and the Pause / Resume / Cancel buttons for whoever may use them.

import { api, confirmDialog, el, may, say, timeEl } from "./lib.js";

function banner(b) {
  if (b.canceled) {
    return el(
      "p",
      { id: "stop-banner", class: "banner", role: "status" },
      `Canceled by ${b.canceled.by}, `,
      timeEl(b.canceled.at),
      ": rows never sent are canceled; rows already on their way keep their course.",
    );
  }
  if (!b.pause) return null;
  const who = b.pause.byBreaker ? "Paused by the circuit breaker" : `Paused by ${b.pause.by}`;
  return el(
    "p",
    { id: "stop-banner", class: "banner", role: "alert" },
    `${who}, `,
    timeEl(b.pause.at),
    `: ${b.pause.reason}. Nothing more of this batch is sent until it is resumed; resume it or cancel it.`,
  );
}

async function act(b, action, onDone) {
  const id = encodeURIComponent(b.id);
  if (action === "cancel") {
    const ok = await confirmDialog({
      title: "Cancel this batch?",
      lines: [
        "Every row not sent yet is canceled and never paid; payments still scheduled are canceled at the service.",
        "Rows already on their way or paid keep their course. This cannot be undone (a canceled row can only be retried).",
      ],
      confirm: "Cancel the batch",
      cancel: "Keep it",
    });
    if (!ok) return;
  }
  try {
    const body = action === "pause" ? { json: { reason: "paused in the console" } } : {};
    const answer = await api(`/api/v1/batches/${id}/${action}`, { method: "POST", ...body });
    say(
      action === "pause"
        ? `Batch ${b.id} paused: nothing more of it is sent until it is resumed.`
        : action === "resume"
          ? `Batch ${b.id} resumed: its rows never sent are queued again.`
          : `Batch ${b.id} canceled: ${answer.unsent} row(s) never sent, ${answer.canceledAtService} scheduled payment(s) canceled.`,
    );
    await onDone();
  } catch (err) {
    say(`${b.id}: ${err.message}`, true);
  }
}

/** The banner and buttons of a batch (a single element; empty for a finished batch that was never stopped). */
export function stopControls(b, onDone) {
  const running = !b.finishedAt && !b.canceled;
  const buttons = [];
  if (running && !b.pause && may("batches.pause")) {
    buttons.push(
      el("button", { type: "button", id: "pause-batch", onclick: () => act(b, "pause", onDone) }, "Pause"),
    );
  }
  if (running && b.pause && may("rows.retry")) {
    buttons.push(
      el(
        "button",
        { type: "button", id: "resume-batch", class: "primary", onclick: () => act(b, "resume", onDone) },
        "Resume",
      ),
    );
  }
  if (running && may("rows.cancel")) {
    buttons.push(
      el(
        "button",
        { type: "button", id: "cancel-batch", class: "button", onclick: () => act(b, "cancel", onDone) },
        "Cancel batch…",
      ),
    );
  }
  return el(
    "div",
    { id: "stop-controls" },
    banner(b),
    buttons.length ? el("p", { class: "actions" }, ...buttons) : null,
  );
}
