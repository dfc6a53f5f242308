/** The gate's context for an API request: the principal is the actor, the client IP is "from". */
import type { FastifyRequest } from "fastify";
import { actorOf } from "../audit/index.js";
import type { GateContext } from "../gate/index.js";
import type { ApiContext } from "./context.js";

export function gateOf(ctx: ApiContext, request: FastifyRequest): GateContext {
  const pipeline = ctx.pipeline.open;
  // startServer always hands the API its open pipeline; without one no money may move.
  if (!pipeline) throw new Error("the API was started without an open pipeline for the gate");
  return { actor: actorOf(request), from: request.ip, pipeline, audit: ctx.audit };
}
