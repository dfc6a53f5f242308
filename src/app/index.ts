/**
 * Public face of the composition root: the services of `payouts worker`, `serve`, `watch` and `demo`
 * built from one config, and the settings each part takes from it.
 */
export {
  type AssembleOptions,
  assembleServices,
  type ServiceName,
  type Services,
  WORKER_SERVICES,
} from "./assemble.js";
export { intakeConnection, pipelineSettings } from "./settings.js";
