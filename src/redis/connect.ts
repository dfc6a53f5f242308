/**
 * Every Redis connection of the tool is made here, so one setting (REDIS_CLUSTER_NODES) turns them all
 * into Redis Cluster connections: worker, serve, submit, status, retry, result and the rest. Without
 * it, REDIS_URL names one Redis; with it, REDIS_URL only lends its user name, password and TLS (rediss:)
 * to every node.
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { ClusterNode } from "./cluster-nodes.js";

/** A single Redis or a Redis Cluster: both run our commands and scripts, and BullMQ takes either. */
export type RedisClient = Redis | Cluster;

export interface ConnectOptions {
  /** Batch the commands issued in one tick into one socket write (not for blocking connections). */
  autoPipelining?: boolean;
  /** Never reconnect: pending and later commands fail ("Connection is closed."). */
  failFast?: boolean;
  /** Queue commands while (re)connecting (default true); false: they fail at once. */
  offlineQueue?: boolean;
  /** Per-command retries over reconnections (default null: forever, as BullMQ requires). */
  maxRetriesPerRequest?: number | null;
  /** Connect on the first command or `connect()` instead of at once. */
  lazyConnect?: boolean;
}

/**
 * Where the connections go: REDIS_URL, and REDIS_CLUSTER_NODES when set (from the config). Every
 * service's settings carry these two, so a connection is made from the settings it was handed.
 */
export interface RedisTarget {
  redisUrl: string;
  /** The cluster's seed nodes; unset: a single Redis at `redisUrl`. */
  redisClusterNodes?: ClusterNode[] | undefined;
}

/**
 * A Redis connection fit for BullMQ (`maxRetriesPerRequest: null` unless asked otherwise), to REDIS_URL
 * or, when cluster nodes are given, to that cluster. `autoPipelining` batches the commands issued in
 * one tick into one socket write: with dozens of jobs in flight that saves most write syscalls. A bare
 * URL is a single Redis.
 */
export function connectRedis(target: string | RedisTarget, options: ConnectOptions = {}): RedisClient {
  const { redisUrl: url, redisClusterNodes: nodes } =
    typeof target === "string" ? { redisUrl: target, redisClusterNodes: undefined } : target;
  const common: RedisOptions = {
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? null : options.maxRetriesPerRequest,
    enableOfflineQueue: options.offlineQueue !== false,
    lazyConnect: options.lazyConnect === true,
    // A one-shot command never reconnects: Redis may come back empty (restarted without its data),
    // and a command that went on writing into it would report work Redis did not keep. Every pending
    // and later command fails instead ("Connection is closed."), and the command says so.
    ...(options.failFast ? { retryStrategy: () => null } : {}),
  };
  const redis = nodes
    ? new Cluster(nodes, clusterOptions(url, common, options))
    : new Redis(url, { ...common, enableAutoPipelining: options.autoPipelining === true });
  // The failure reaches whoever needs Redis through the rejected command (a one-shot command fails
  // with one line; long-running services log it through BullMQ's worker "error" events and retry).
  // Without a listener ioredis prints a stack trace for every reconnection attempt.
  redis.on("error", () => undefined);
  return redis;
}

function clusterOptions(url: string, common: RedisOptions, options: ConnectOptions): ClusterOptions {
  const { username, password, tls } = credentialsOf(url);
  const { maxRetriesPerRequest, enableOfflineQueue, lazyConnect } = common;
  return {
    enableAutoPipelining: options.autoPipelining === true,
    enableOfflineQueue: enableOfflineQueue ?? true,
    lazyConnect: lazyConnect ?? false,
    ...(options.failFast ? { clusterRetryStrategy: () => null } : {}),
    redisOptions: {
      maxRetriesPerRequest: maxRetriesPerRequest ?? null,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
      ...(tls ? { tls: {} } : {}),
    },
  };
}

/** User, password and TLS of REDIS_URL, applied to every cluster node. */
function credentialsOf(url: string): { username: string; password: string; tls: boolean } {
  try {
    const u = new URL(url);
    return {
      username: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      tls: u.protocol === "rediss:",
    };
  } catch {
    return { username: "", password: "", tls: false };
  }
}
