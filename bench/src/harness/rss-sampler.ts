// Samples a process tree's resident memory while a run goes on: the peak shows whether a proxy's
// memory grows with the rows a query touches, which readings before and after the run can miss.
import { processTree, rssBytesOf } from './proc-stats.js';

export interface RssReading {
  /** Just before sampling started. */
  idleBytes: number;
  peakBytes: number;
  /** The last sample, when sampling stopped. */
  endBytes: number;
  samples: number;
}

export interface RssSampler {
  stop(): RssReading;
}

/** VmRSS of `pid`'s tree every `intervalMs` until stop(); the tree is found once, at start. */
export function sampleRss(pid: number, intervalMs = 100): RssSampler {
  const tree = processTree(pid);
  const idle = rssBytesOf(tree);
  let peak = idle;
  let last = idle;
  let samples = 1;
  const read = () => {
    last = rssBytesOf(tree);
    peak = Math.max(peak, last);
    samples++;
  };
  const timer = setInterval(read, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      read();
      return { idleBytes: idle, peakBytes: peak, endBytes: last, samples };
    },
  };
}
