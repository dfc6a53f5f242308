/** Public face of the Redis connection: one place that decides between a single Redis and a cluster. */
export { type ClusterNode, ClusterNodesError, hashTaggedPrefix, parseClusterNodes } from "./cluster-nodes.js";
export { type ConnectOptions, connectRedis, type RedisClient, type RedisTarget } from "./connect.js";
export { gatherCalls } from "./gather-calls.js";
export {
  checkLayoutVersion,
  LAYOUT_VERSION,
  type LayoutMigration,
  LayoutVersionError,
  layoutKey,
  layoutProblem,
  MIGRATIONS,
  migrateLayout,
} from "./layout-version.js";
