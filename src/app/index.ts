/**
 * Public face of the composition root: the services of `payouts worker`, `serve`, `watch` and `demo`
 * built from one config, and the settings each part takes from it.
 */
import type { AppConfig } from "../config/index.js";
import type { AssembleOptions, Services } from "./assemble.js";

export type { AssembleOptions, Services } from "./assemble.js";
export { type ServiceName, WORKER_SERVICES } from "./service-names.js";
export { intakeConnection, pipelineSettings } from "./settings.js";

/**
 * Starts the parts `options.run` names (assemble.ts), loaded on first use: they bring the HTTP server,
 * the console, the queues' workers and the metrics, which the one-shot commands (`status`, `submit`,
 * `retry`...) never need and should not wait to load.
 */
export async function assembleServices(config: AppConfig, options: AssembleOptions): Promise<Services> {
  const { assembleServices: assemble } = await import("./assemble.js");
  return assemble(config, options);
}
