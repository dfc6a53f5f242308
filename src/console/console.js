// The operator console: a page per address (`#/batches/<id>?state=failed`), so reload, Back and a
// shared link all land where they should. Views are in *-view.js; lib.js has the shared helpers.

import { renderAudit } from "./audit-view.js";
import { renderBatch, updateBatch } from "./batch-view.js";
import { renderBatches, updateBatchLine } from "./batches-view.js";
import { $, api, currentRoute, go, may, say, sayingError, session, takeNextMessage } from "./lib.js";
import { renderReference } from "./reference-view.js";
import { renderUpload } from "./upload-view.js";

const ROUTES = {
  upload: renderUpload,
  uploads: renderUpload,
  batches: (route, options) =>
    route.path.length > 1 ? renderBatch(route, options) : renderBatches(route, options),
  audit: renderAudit,
  reference: renderReference,
};

let lastPage = "";

async function route() {
  const r = currentRoute();
  const name = r.path[0] ?? "";
  const view = ROUTES[name];
  if (!view) {
    go(may("sheets.upload") ? "#/upload" : "#/batches", { replace: true });
    return;
  }
  // The same page with other filters keeps its place; another page starts fresh.
  const page = r.path.slice(0, 2).join("/");
  const fresh = page !== lastPage;
  lastPage = page;
  // A new page starts without the last one's message (unless it was sent along to this page); a
  // change of filters clears an error, which was about the action before it.
  const message = takeNextMessage();
  if (message) say(message.text, message.isError);
  else if (fresh || sayingError()) say("");
  for (const a of document.querySelectorAll("nav a[href^='#/']")) {
    const current = a.getAttribute("href").slice(2) === name;
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // A control the page draws again (a filter, a pager) is a new element: the focus would fall to the
  // page's start, so it goes back to the control of the same id.
  const before = document.activeElement;
  const focusId = before && before !== document.body ? before.id : "";
  try {
    await view(r, { fresh });
  } catch (err) {
    say(err.message, true);
  }
  const now = document.activeElement;
  const untouched = now === before || now === document.body || !now?.isConnected;
  // A new page takes the focus to its start, unless the person moved it while the page was loading.
  if (fresh) {
    if (untouched) $("main").focus();
  } else if (focusId && (now === document.body || !now?.isConnected)) {
    $(focusId)?.focus();
  }
}

function listen() {
  const events = new EventSource("/api/v1/events");
  events.addEventListener("batch", (e) => {
    const b = JSON.parse(e.data);
    updateBatchLine(b);
    updateBatch(b);
  });
}

async function start() {
  session.me = await api("/api/v1/session");
  session.csrf = session.me.csrfToken;
  $("who").textContent = `${session.me.name} (${session.me.role})`;
  $("nav-upload").hidden = !may("sheets.upload");
  $("nav-audit").hidden = !may("audit.read");
  $("nav-queues").hidden = !may("queues.view");
  $("logout").addEventListener("click", async () => {
    await api("/api/v1/session", { method: "DELETE" }).catch(() => {});
    window.location.assign("/login");
  });
  $("status-close").addEventListener("click", () => say(""));
  // The skip link moves focus to the page without changing the address (which is the route).
  $("skip").addEventListener("click", (e) => {
    e.preventDefault();
    $("main").focus();
  });
  window.addEventListener("hashchange", route);
  listen();
  await route();
}

start().catch((err) => say(err.message, true));
