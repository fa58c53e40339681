// The suites `npm run bench` knows. A new suite (move, next) is one file under suites/ exporting a
// Suite, plus one line here: a suite is listed only once it measures something.
import { twoPhase } from './2pc.js';
import { failover } from './failover.js';
import { idle } from './idle.js';
import { move } from './move.js';
import { overhead } from './overhead.js';
import { scaleout } from './scaleout.js';
import { scatter } from './scatter.js';
import { steady } from './steady.js';
import type { Suite } from './suite.js';

export const SUITES: readonly Suite[] = [
  overhead,
  scaleout,
  idle,
  scatter,
  twoPhase,
  steady,
  move,
  failover,
];

export function findSuite(name: string): Suite | undefined {
  return SUITES.find((s) => s.name === name);
}
