// The contract of a suite: a name, one line for --help, and a run that starts its own servers,
// measures, stops everything it started, and hands back a result for the writers.
import type { BenchOptions } from '../options.js';
import type { SuiteResult } from '../report/model.js';

export interface SuiteContext {
  opts: BenchOptions;
  /** The command line as typed, recorded with the result. */
  command: string;
  /** Progress for the person watching; never part of the result. */
  log(line: string): void;
}

export interface Suite {
  name: string;
  summary: string;
  run(ctx: SuiteContext): Promise<SuiteResult>;
}
