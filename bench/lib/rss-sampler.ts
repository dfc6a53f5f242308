/**
 * Peak resident memory of this process while a piece of work runs. Two views, because each misses
 * something: the 50 ms samples show the peak during the work (not startup), but a synchronous burst
 * between two ticks escapes them; the kernel's maxRSS catches every byte but covers the process's whole
 * life.
 */

export interface RssPeak {
  /** RSS when sampling started, in bytes. */
  startBytes: number;
  /** Highest sampled RSS, in bytes. */
  sampledPeakBytes: number;
  samples: number;
  /** `process.resourceUsage().maxRSS`, converted to bytes (Node reports kilobytes). */
  maxRssBytes: number;
}

export interface RssSampler {
  stop(): RssPeak;
}

export function startRssSampler(intervalMs = 50): RssSampler {
  const startBytes = process.memoryUsage.rss();
  let peak = startBytes;
  let samples = 1;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    samples++;
    if (rss > peak) peak = rss;
  };
  const timer = setInterval(sample, intervalMs);
  // The sampler must never keep the process alive on its own.
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return {
        startBytes,
        sampledPeakBytes: peak,
        samples,
        maxRssBytes: process.resourceUsage().maxRSS * 1024,
      };
    },
  };
}
