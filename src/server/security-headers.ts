/**
 * Headers on every answer: a strict Content-Security-Policy (only this server's own scripts, styles
 * and connections; no inline code, no framing), no sniffing, no referrer. The queue view (bull-board)
 * ships a React page with inline styles, so under /admin/queues styles may be inline.
 */
import type { FastifyInstance } from "fastify";

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const QUEUE_VIEW_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self' data:; manifest-src 'self'; frame-ancestors 'none'; base-uri 'self'";

export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  app.addHook("onSend", async (request, reply, payload) => {
    const queueView = request.url.startsWith("/admin/queues");
    reply.header("content-security-policy", queueView ? QUEUE_VIEW_POLICY : CONTENT_SECURITY_POLICY);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    reply.header("x-frame-options", "DENY");
    reply.header("cross-origin-opener-policy", "same-origin");
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    return payload;
  });
}
