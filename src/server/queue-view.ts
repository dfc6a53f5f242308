/**
 * bull-board at `/admin/queues`, for admins only, read-only: a payment job is never retried or
 * removed from here (that would step around the retry rules; use `payouts retry` or the console).
 * Its menu links back to the console, and the web font its page would load from another site is left
 * out (nothing comes from another site; its own fonts fall back to the system's).
 */
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { Queue } from "bullmq";
import type { FastifyInstance } from "fastify";
import { ApiError, errorBody } from "../api/api-error.js";
import { allow } from "../auth/index.js";

export const QUEUE_VIEW_PATH = "/admin/queues";

export async function registerQueueView(app: FastifyInstance, queues: readonly Queue[]): Promise<void> {
  const adapter = new FastifyAdapter();
  adapter.setBasePath(QUEUE_VIEW_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: {
      uiConfig: { boardTitle: "payouts queues", miscLinks: [{ text: "Back to the console", url: "/" }] },
    },
  });
  const check = allow("queues.view");
  await app.register(async (scope) => {
    // bull-board renders errors with its own handler: answer a refusal here, in our error shape.
    scope.addHook("preHandler", async (request, reply) => {
      try {
        await check.call(scope, request, reply);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return reply.code(err.statusCode).send(errorBody(err.code, err.message));
      }
    });
    scope.addHook("onSend", async (_request, reply, payload) => {
      const type = String(reply.getHeader("content-type") ?? "");
      return typeof payload === "string" && type.startsWith("text/html")
        ? withoutOutsideFonts(payload)
        : payload;
    });
    await scope.register(adapter.registerPlugin(), { prefix: QUEUE_VIEW_PATH });
  });
}

/** The page without stylesheet links to another site (bull-board's page links a web font). */
export function withoutOutsideFonts(html: string): string {
  return html.replace(/<link[^>]+href="https?:\/\/[^"]*"[^>]*>/g, "");
}
