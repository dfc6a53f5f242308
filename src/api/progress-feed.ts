/**
 * `GET /api/v1/events`: server-sent events of batch progress, so pages update live. One feed per
 * server polls the store once a second while anybody listens (never per listener): the batches not
 * finished yet and the latest few (a retry can wake a finished one). A listener gets an event per
 * batch whose counts, pause, cancel, approval or ledger check changed: `event: batch` with the batch's
 * summary (as `GET /api/v1/batches/{id}`).
 */
import type { FastifyInstance } from "fastify";
import { allow } from "../auth/index.js";
import type { BatchStore } from "../batches/index.js";
import { type BatchView, batchViewOf } from "./batch-views.js";

const POLL_MS = 1_000;
const HEARTBEAT_MS = 15_000;
/** The newest batches are watched too, finished or not. */
const LATEST = 20;

type Listener = (view: BatchView) => void;

export function createProgressFeed(store: BatchStore, prefix: string, pollMs = POLL_MS) {
  const listeners = new Set<Listener>();
  let last = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  async function poll(): Promise<void> {
    if (polling) return;
    polling = true;
    try {
      const latest = await store.redis.zrevrange(store.keys.batches, 0, LATEST - 1);
      const ids = new Set([...(await store.batchIdsAwaitingOutcomes()), ...latest]);
      const seen = new Map<string, string>();
      for (const id of ids) {
        const p = await store.progress(id);
        if (!p) continue;
        const view = await batchViewOf(store, prefix, p);
        // What a page shows of a batch beyond its counts too: a pause, a cancel, an approval, a ledger check.
        const fingerprint = JSON.stringify([
          view.state,
          view.counts,
          view.done,
          view.pause?.at ?? null,
          view.canceled?.at ?? null,
          view.approval?.status ?? null,
          view.ledger,
        ]);
        seen.set(id, fingerprint);
        if (last.get(id) !== fingerprint) {
          for (const l of listeners) l(view);
        }
      }
      last = seen;
    } catch {
      // Redis away for a moment: the next tick tries again.
    } finally {
      polling = false;
    }
  }

  return {
    subscribe(listener: Listener): () => void {
      listeners.add(listener);
      timer ??= setInterval(() => void poll(), pollMs);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
          last.clear();
        }
      };
    },
    close(): void {
      listeners.clear();
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

export function registerEventRoute(app: FastifyInstance, feed: ReturnType<typeof createProgressFeed>): void {
  app.get(
    "/api/v1/events",
    {
      preValidation: allow("batches.read"),
      schema: {
        tags: ["batches"],
        summary:
          "Live progress: server-sent events, `event: batch` with a batch (as GET /api/v1/batches/{id})",
        produces: ["text/event-stream"],
      },
    },
    async (request, reply) => {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-accel-buffering": "no",
        "x-content-type-options": "nosniff",
      });
      res.write("retry: 3000\n: connected\n\n");
      const unsubscribe = feed.subscribe((view) => {
        res.write(`event: batch\ndata: ${JSON.stringify(view)}\n\n`);
      });
      const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), HEARTBEAT_MS);
      const end = () => {
        clearInterval(heartbeat);
        unsubscribe();
      };
      request.raw.on("close", end);
      res.on("close", end);
    },
  );
}
