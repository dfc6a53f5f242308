/**
 * Public face of Redis: the connection (one place that decides between a single Redis and a cluster),
 * the layout version, and the day buckets that keep many short fields compact.
 */
export { type ClusterNode, ClusterNodesError, hashTaggedPrefix, parseClusterNodes } from "./cluster-nodes.js";
export { type ConnectOptions, connectRedis, type RedisClient, type RedisTarget } from "./connect.js";
export {
  BUCKET_FILL,
  DAY_BUCKET_CONSTANTS,
  DAY_MS,
  dayCountKey,
  dayOf,
  LEVEL_BUCKETS,
} from "./day-buckets.js";
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
export { type LuaScript, type LuaValue, luaLiteral, luaScript, luaScripts } from "./lua-scripts.js";
