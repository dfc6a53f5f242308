/**
 * The other yardstick of bench:e2e: N jobs through BullMQ with a processor that does nothing, in this
 * process, on a private redis-server, at the tool's concurrency. A payment job of the tool carries up
 * to ROWS_PER_JOB rows (docs/design.md), so a row's share of this is CPU the tool spends before any
 * work of its own.
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { startPrivateRedis } from "../../src/demo/private-redis.js";
import { cpuSecondsOf } from "./processes.js";

export interface BareQueueResult {
  /** CPU of this process per job (adding it, running it, finishing it), in seconds. */
  clientSecondsPerJob: number;
  /** CPU of redis-server per job, in seconds. */
  redisSecondsPerJob: number;
}

/** Jobs added per call, as the tool's feed adds them. */
const ADD_CHUNK = 500;

export async function bareQueueLoop(count: number, concurrency: number): Promise<BareQueueResult> {
  const redis = await startPrivateRedis();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const workerConnection = connection.duplicate();
  const queue = new Queue("bare", { connection });
  let worker: Worker | undefined;
  try {
    const cpu0 = process.cpuUsage();
    const redis0 = await cpuSecondsOf(redis.pid);
    let done = 0;
    const allDone = new Promise<void>((resolve) => {
      worker = new Worker(
        "bare",
        async () => {
          if (++done === count) resolve();
        },
        { connection: workerConnection, concurrency },
      );
    });
    for (let i = 0; i < count; i += ADD_CHUNK) {
      const jobs = Array.from({ length: Math.min(ADD_CHUNK, count - i) }, (_, j) => ({
        name: "pay",
        data: { batchId: "bare", rowKey: `BARE-${i + j}`, attempt: 1 },
        opts: { jobId: `bare-${i + j}`, removeOnComplete: true },
      }));
      await queue.addBulk(jobs);
    }
    await allDone;
    const cpu = process.cpuUsage(cpu0);
    return {
      clientSecondsPerJob: (cpu.user + cpu.system) / 1e6 / count,
      redisSecondsPerJob: ((await cpuSecondsOf(redis.pid)) - redis0) / count,
    };
  } finally {
    await worker?.close();
    await queue.close();
    workerConnection.disconnect();
    connection.disconnect();
    await redis.stop();
  }
}
