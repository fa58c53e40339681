// Samples a process tree's resident memory while a run goes on: the peak shows whether a proxy's
// memory grows with the rows a query touches, which readings before and after the run can miss,
// and the series shows whether it keeps growing under a steady load.
import { processTree, rssBytesOf } from './proc-stats.js';
import { median } from './stats.js';

export interface RssSample {
  /** Milliseconds since sampling started. */
  atMs: number;
  bytes: number;
}

export interface RssReading {
  /** Just before sampling started. */
  idleBytes: number;
  peakBytes: number;
  /** The last sample, when sampling stopped. */
  endBytes: number;
  samples: number;
  /** Every sample in order, the first being idleBytes and the last endBytes. */
  series: RssSample[];
}

export interface RssSampler {
  stop(): RssReading;
}

/** VmRSS of `pid`'s tree every `intervalMs` until stop(); the tree is found once, at start. */
export function sampleRss(pid: number, intervalMs = 100): RssSampler {
  const tree = processTree(pid);
  const startedAt = performance.now();
  const series: RssSample[] = [];
  let peak = 0;
  const read = () => {
    const bytes = rssBytesOf(tree);
    series.push({ atMs: performance.now() - startedAt, bytes });
    peak = Math.max(peak, bytes);
  };
  read();
  const timer = setInterval(read, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      read();
      return {
        idleBytes: series[0]!.bytes,
        peakBytes: peak,
        endBytes: series.at(-1)!.bytes,
        samples: series.length,
        series,
      };
    },
  };
}

export interface RssDrift {
  /** Median of the samples in the first window: the level the warm-up left. */
  startBytes: number;
  /** Median of the samples in the last window. */
  endBytes: number;
  /** (end - start) / start, in percent. */
  growthPct: number;
}

/**
 * How far resident memory moved between the first and the last `windowMs` of a series, each
 * window reduced to its median so one garbage collection (or one allocation burst) at either edge
 * does not decide the answer. Undefined for an empty series.
 */
export function rssDrift(series: readonly RssSample[], windowMs: number): RssDrift | undefined {
  const first = series[0];
  const last = series.at(-1);
  if (!first || !last) return undefined;
  const startBytes = median(
    series.filter((s) => s.atMs <= first.atMs + windowMs).map((s) => s.bytes),
  )!;
  const endBytes = median(
    series.filter((s) => s.atMs >= last.atMs - windowMs).map((s) => s.bytes),
  )!;
  return { startBytes, endBytes, growthPct: ((endBytes - startBytes) / startBytes) * 100 };
}
