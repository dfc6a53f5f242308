/**
 * `POST /webhooks/payouts` in its own Fastify context: the body arrives as raw bytes whatever its
 * content type (the HMAC is over exactly those bytes, checked before anything parses them), within
 * its own size limit, with the answers the receiver gives (`{ "error": "…" }` bodies, as before).
 */
import type { FastifyError, FastifyInstance } from "fastify";
import type { ServerMetrics } from "./metrics.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

export interface WebhookRouteOptions {
  path: string;
  receiver: WebhookReceiver;
  metrics: ServerMetrics;
  limitBytes: number;
}

export function registerWebhookRoute(options: WebhookRouteOptions) {
  const { path, receiver, metrics, limitBytes } = options;
  return async function webhookRoute(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: limitBytes }, (_req, body, done) =>
      done(null, body),
    );
    app.setErrorHandler((err: FastifyError, _request, reply) => {
      if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE" || err.statusCode === 413) {
        metrics.countDelivery("too_large");
        // The rest of the body is not read: close the connection after answering.
        return reply
          .code(413)
          .header("connection", "close")
          .send({ error: `body larger than ${limitBytes} bytes` });
      }
      return reply
        .code(err.statusCode ?? 500)
        .send({ error: err.statusCode ? err.message : "internal error" });
    });
    app.post(path, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const answer = await receiver(raw, request.headers["x-service-signature"]);
      metrics.countDelivery(answer.outcome);
      return reply.code(answer.status).header("cache-control", "no-store").send(answer.body);
    });
    app.route({
      method: ["GET", "PUT", "DELETE", "PATCH"],
      url: path,
      handler: async (_request, reply) => reply.code(405).header("allow", "POST").send({ error: "use POST" }),
    });
  };
}
