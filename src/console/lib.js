// Shared helpers of the console: building DOM (every server value goes through text nodes, never
// innerHTML, so a sheet's cells can never become markup), calling /api/v1, the status line, and
// formatting money and times for the viewer (their locale and time zone).

export const $ = (id) => document.getElementById(id);

/** An element with attributes (`on…` are listeners) and children (nodes or text). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/**
 * Puts a part of a live page drawn anew in place of the one shown, keeping every element that reads
 * the same. A link or button replaced between the press and the release of a click gets no click (the
 * person's download or action is silently lost), and one replaced while focused loses the focus. Only
 * for parts whose listeners do not depend on what changed: a kept element keeps its listeners.
 */
export function redraw(shown, next) {
  if (!shown || shown.isEqualNode(next)) return;
  const incoming = [...next.childNodes];
  const sameShell =
    shown.nodeType === Node.ELEMENT_NODE &&
    shown.tagName === next.tagName &&
    shown.childNodes.length === incoming.length &&
    shown.attributes.length === next.attributes.length &&
    [...next.attributes].every((a) => shown.getAttribute(a.name) === a.value);
  if (!sameShell) {
    shown.replaceWith(next);
    return;
  }
  const current = [...shown.childNodes];
  for (const [i, child] of incoming.entries()) redraw(current[i], child);
}

export const session = { me: null, csrf: "" };

export const may = (permission) => session.me?.permissions.includes(permission) ?? false;

let sayTimer;
/**
 * The status line: what just happened. A message clears on the next page change and after a while;
 * an error stays until the next action or until dismissed, so it can be read. It floats over the
 * page (console.css), so its coming and going never moves what the reader is about to click.
 */
export function say(text, isError = false) {
  const box = $("status-box");
  clearTimeout(sayTimer);
  $("status").replaceChildren(...(Array.isArray(text) ? text : [text]));
  box.classList.toggle("error", isError);
  box.hidden = !text || (Array.isArray(text) && text.length === 0);
  if (text && !isError) sayTimer = setTimeout(() => say(""), 15_000);
}

/** Whether the status line shows an error (a change of filters clears it). */
export const sayingError = () => $("status-box").classList.contains("error");

export class ApiCallError extends Error {
  constructor(message, code, body, status) {
    super(message);
    this.code = code;
    this.body = body;
    this.status = status;
  }
}

export async function api(path, options = {}) {
  const headers = { ...(options.headers ?? {}) };
  const init = { credentials: "same-origin", ...options, headers };
  if (options.method && options.method !== "GET") headers["x-csrf-token"] = session.csrf;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(options.json);
  }
  delete init.json;
  const res = await fetch(path, init);
  if (res.status === 401) {
    window.location.assign(`/login${window.location.hash}`);
    throw new ApiCallError("logged out", "UNAUTHENTICATED", null, 401);
  }
  const body = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) {
    throw new ApiCallError(
      body?.error?.message ?? `request failed (${res.status})`,
      body?.error?.code,
      body,
      res.status,
    );
  }
  return body;
}

const moneyFormats = new Map();
/** `USD 59,619,136.13`, `JPY 5,000`: the amount (text, major units) in its currency, exactly. */
export function money(amount, currency) {
  if (amount === null || amount === undefined || amount === "") return "";
  if (!currency) return String(amount);
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat(undefined, { style: "currency", currency, currencyDisplay: "code" });
    } catch {
      f = null;
    }
    moneyFormats.set(currency, f);
  }
  // Intl formats a decimal string exactly (no float rounding of large amounts).
  return f ? f.format(amount) : `${currency} ${amount}`;
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZoneName: "short",
});
/** A time in the viewer's own zone, with the zone named. */
export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : timeFormat.format(d);
}

export const count = (n) => new Intl.NumberFormat().format(n);

/** `<time>` with the viewer's time and the exact UTC time as a tooltip. */
export const timeEl = (iso) => el("time", { datetime: iso ?? "", title: iso ?? "" }, when(iso));

const ISO_TIME = /(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)/;
/** A server's sentence with its UTC times shown in the viewer's zone (each a `<time>`). */
export const withTimes = (text) =>
  String(text ?? "")
    .split(ISO_TIME)
    .map((part, i) => (i % 2 === 1 ? timeEl(part) : part));

/** A row state as a badge. */
export const stateBadge = (s) => el("span", { class: `state state-${s}` }, s);

/** A confirmation dialog (native <dialog>): resolves true when confirmed. */
export function confirmDialog({ title, lines, confirm, cancel = "Cancel" }) {
  return new Promise((resolve) => {
    const titleId = `dlg-${Math.random().toString(36).slice(2)}`;
    const dialog = el(
      "dialog",
      { "aria-labelledby": titleId, class: "confirm" },
      el("h2", { id: titleId }, title),
      ...lines.map((l) => el("p", {}, l)),
      el(
        "form",
        { method: "dialog", class: "actions" },
        el("button", { value: "yes", class: "primary" }, confirm),
        el("button", { value: "no" }, cancel),
      ),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "yes");
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Route parts of the address: `#/batches/b1?state=failed` → { path: ["batches", "b1"], query }. */
export function currentRoute() {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const [p, q = ""] = hash.split("?", 2);
  return { path: p.split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q) };
}

/** The address of a page (for links and navigation). */
export function href(path, query) {
  const q = query
    ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== "" && v != null))
    : null;
  const qs = q && [...q].length ? `?${q}` : "";
  return `#/${path.map(encodeURIComponent).join("/")}${qs}`;
}

let nextMessage = null;
/** The message `go` was given for the page it goes to, once (console.js shows it when that page is drawn). */
export function takeNextMessage() {
  const m = nextMessage;
  nextMessage = null;
  return m;
}

/**
 * Goes to a page; `replace` changes the address without a new history entry (filters as you type).
 * `message` is said once the new page is drawn: said before, the page change would clear it at once.
 */
export function go(address, { replace = false, message = null } = {}) {
  nextMessage = message;
  if (replace) {
    history.replaceState(null, "", address);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    window.location.hash = address.slice(1);
  }
}

/** The sum of amounts given as text in major units of one currency (`"10.50"` + `"2.25"`), exactly. */
export function addAmounts(amounts) {
  let decimals = 0;
  for (const a of amounts) decimals = Math.max(decimals, (String(a).split(".")[1] ?? "").length);
  let sum = 0n;
  for (const a of amounts) {
    const [whole, fraction = ""] = String(a).split(".");
    sum += BigInt(whole + fraction.padEnd(decimals, "0"));
  }
  const negative = sum < 0n;
  const digits = (negative ? -sum : sum).toString().padStart(decimals + 1, "0");
  const text = decimals ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
  return negative ? `-${text}` : text;
}

/** A duration in words: `about 3 min`, `about 2 h 5 min`. */
export function duration(ms) {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return `about ${minutes} min`;
  return `about ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
