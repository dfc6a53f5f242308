/**
 * The operator console: static HTML, CSS and JS from src/console, served by this server (no outside
 * asset, no inline script, so the strict CSP holds). `/` needs a session (else it sends the browser
 * to `/login`); the log-in page and the assets carry no data and are open.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { packageFile } from "../assets/index.js";

const JS = "text/javascript; charset=utf-8";
const ASSETS: Record<string, string> = {
  "console.css": "text/css; charset=utf-8",
  "console.js": JS,
  "lib.js": JS,
  "upload-view.js": JS,
  "control-totals.js": JS,
  "batches-view.js": JS,
  "batch-view.js": JS,
  "ledger-card.js": JS,
  "batch-stop.js": JS,
  "audit-view.js": JS,
  "correct-row-form.js": JS,
  "reference-view.js": JS,
  "login.js": JS,
};

export async function registerConsolePages(app: FastifyInstance): Promise<void> {
  const dir = path.dirname(packageFile("src/console/index.html"));
  const files = new Map<string, Buffer>();
  for (const name of ["index.html", "login.html", ...Object.keys(ASSETS)]) {
    files.set(name, await readFile(path.join(dir, name)));
  }
  const html = (name: string) => files.get(name)!;

  app.get("/", async (request, reply) => {
    if (!request.principal) return reply.redirect("/login", 303);
    return reply.type("text/html; charset=utf-8").send(html("index.html"));
  });
  app.get("/login", async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send(html("login.html")),
  );
  app.get<{ Params: { name: string } }>("/console/:name", async (request, reply) => {
    const type = ASSETS[request.params.name];
    if (!type) return reply.code(404).send({ error: { code: "NOT_FOUND", message: "no such file" } });
    return reply.type(type).header("cache-control", "no-cache").send(files.get(request.params.name));
  });
}
