/**
 * REDIS_CLUSTER_NODES: the seed nodes of a Redis Cluster, `host:port,host:port` (pure parsing; the
 * connection itself is ./connect.ts). A few seeds are enough: the client learns the rest of the
 * cluster from any node it reaches.
 */
import { PayoutsError } from "../errors/index.js";
export interface ClusterNode {
  host: string;
  port: number;
}

export class ClusterNodesError extends PayoutsError {
  override readonly name = "ClusterNodesError";
  constructor(message: string) {
    super("INVALID_SETTING", message, { kind: "usage" });
  }
}

/** Parses `host:port,host:port` (an IPv6 host in brackets: `[::1]:7000`); throws naming the bad item. */
export function parseClusterNodes(value: string): ClusterNode[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (items.length === 0) throw new ClusterNodesError("expected host:port[,host:port...]");
  return items.map((item) => {
    const match = /^(?:\[([^\]]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(item);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) {
      throw new ClusterNodesError(`"${item}" is not host:port (for example 10.0.0.5:6379)`);
    }
    return { host: (match[1] ?? match[2]) as string, port };
  });
}

/**
 * The key prefix as a Redis Cluster needs it: wrapped in a hash tag (`payouts` → `{payouts}`) unless it
 * has one already. Every key of an installation then hashes to one slot, so each Lua script (the send
 * fence reads BullMQ's job lock beside our row key) and each BullMQ queue touches a single slot.
 */
export function hashTaggedPrefix(prefix: string): string {
  return /\{[^}]+\}/.test(prefix) ? prefix : `{${prefix}}`;
}
