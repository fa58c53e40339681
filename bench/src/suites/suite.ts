// The contract of a suite: a name, one line for --help, and a run that starts its own servers,
// measures, stops everything it started, and hands back a result for the writers.
import { REPO_ROOT } from '../harness/entry.js';
import { machineInfo } from '../harness/machine.js';
import type { BenchOptions, OptionDefaults } from '../options.js';
import { isoDate, type SuiteResult } from '../report/model.js';

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
  /** Its own defaults for --rounds, --duration, --warmup, when they differ from the shared ones. */
  defaults?: OptionDefaults;
  run(ctx: SuiteContext): Promise<SuiteResult>;
}

/** When and where a run happened: the part of every result that no suite fills differently. */
export function runStamp(
  ctx: SuiteContext,
  startedAt: Date,
  pgbouncerBin?: string,
): Pick<SuiteResult, 'date' | 'startedAt' | 'finishedAt' | 'command' | 'machine'> {
  return {
    date: isoDate(startedAt),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    command: ctx.command,
    machine: machineInfo(REPO_ROOT, pgbouncerBin),
  };
}
