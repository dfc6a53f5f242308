/**
 * A logging HTTP proxy between our client and the sandbox, as an outside tester would put one there:
 * it forwards every request, counts them by method and path, remembers every Idempotency-Key with the
 * hashes of the bodies sent under it, and can HOLD requests that match a rule (forwarded only when the
 * test releases them), which is how a test makes a request arrive late.
 */
import { createHash } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HeldRequest {
  method: string;
  path: string;
  /** Forwards the request to the service now. */
  release(): void;
}

export interface Hold {
  /** Resolves when a matching request arrives (it is held until released). */
  arrived: Promise<HeldRequest>;
  /** Stops holding further requests (held ones stay held until released). */
  cancel(): void;
}

export interface HoldingProxy {
  /** Base URL to give the client (`http://127.0.0.1:<port>/v2`). */
  url: string;
  /** Requests seen, as `METHOD /path` (query stripped) → count. */
  counts: Map<string, number>;
  /** Answers forwarded, as `METHOD /path STATUS` → count (a request the upstream never answered is not here). */
  answers: Map<string, number>;
  /** Idempotency-Key → the distinct body hashes sent under it. */
  bodiesByKey: Map<string, Set<string>>;
  /**
   * Holds the next `times` requests (default 1) for which `match` is true. With `what: "response"`
   * the request goes on to the service at once and its ANSWER is held (a payment created whose
   * response comes late).
   */
  hold(match: (method: string, path: string) => boolean, times?: number, what?: "request" | "response"): Hold;
  /** Keys sent with more than one body. */
  keysWithTwoBodies(): string[];
  close(): Promise<void>;
}

interface Rule {
  match: (method: string, path: string) => boolean;
  left: number;
  what: "request" | "response";
  resolve: (held: HeldRequest) => void;
}

/**
 * Rewrites an answer before it goes back (a faulty service or cache between us and the ledger):
 * returns the body to send instead, or undefined to send the real one.
 */
export type AnswerRewrite = (
  method: string,
  path: string,
  status: number,
  body: Buffer,
) => Buffer | undefined;

/** Starts a proxy in front of `target` (the sandbox's base URL, ending in `/v2`). */
export async function startHoldingProxy(
  target: string,
  options: { rewriteAnswer?: AnswerRewrite } = {},
): Promise<HoldingProxy> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  const bodiesByKey = new Map<string, Set<string>>();
  const rules: Rule[] = [];
  const open = new Set<ServerResponse>();

  const labelOf = (req: IncomingMessage) =>
    `${req.method ?? "GET"} ${(req.url ?? "/").split("?")[0]!.replace(upstream.pathname.replace(/\/$/, ""), "")}`;
  const answers = new Map<string, number>();
  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse, gate?: Promise<void>) => {
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const label = `${labelOf(req)} ${answer.statusCode}`;
          answers.set(label, (answers.get(label) ?? 0) + 1);
          void (gate ?? Promise.resolve()).then(() => {
            if (res.destroyed) return;
            const real = Buffer.concat(chunks);
            const method = req.method ?? "GET";
            const rewritten = options.rewriteAnswer?.(
              method,
              labelOf(req).slice(method.length + 1),
              answer.statusCode ?? 502,
              real,
            );
            if (rewritten === undefined) {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(real);
              return;
            }
            res.writeHead(answer.statusCode ?? 502, {
              ...answer.headers,
              "content-length": String(rewritten.length),
            });
            res.end(rewritten);
          });
        });
      },
    );
    out.on("error", () => res.destroy());
    out.end(body);
  };

  const server = createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? "GET";
      const label = labelOf(req);
      const path = label.slice(method.length + 1);
      counts.set(label, (counts.get(label) ?? 0) + 1);
      const key = req.headers["idempotency-key"];
      if (typeof key === "string" && body.length > 0) {
        const hashes = bodiesByKey.get(key) ?? new Set<string>();
        hashes.add(createHash("sha256").update(body).digest("hex"));
        bodiesByKey.set(key, hashes);
      }
      const rule = rules.find((r) => r.left > 0 && r.match(method, path));
      if (!rule) return forward(req, body, res);
      rule.left--;
      if (rule.what === "response") {
        let open!: () => void;
        forward(
          req,
          body,
          res,
          new Promise<void>((r) => {
            open = r;
          }),
        );
        rule.resolve({ method, path, release: () => open() });
        return;
      }
      let released = false;
      rule.resolve({
        method,
        path,
        release: () => {
          if (released) return;
          released = true;
          forward(req, body, res);
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    counts,
    answers,
    bodiesByKey,
    hold(match, times = 1, what = "request") {
      let resolve!: (held: HeldRequest) => void;
      const arrived = new Promise<HeldRequest>((r) => {
        resolve = r;
      });
      const rule: Rule = { match, left: times, what, resolve };
      rules.push(rule);
      const cancel = () => {
        rule.left = 0;
      };
      return { arrived, cancel };
    },
    keysWithTwoBodies: () => [...bodiesByKey].filter(([, hashes]) => hashes.size > 1).map(([key]) => key),
    async close() {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
