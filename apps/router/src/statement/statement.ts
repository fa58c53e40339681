// A statement as the statement path carries it, made alike by the simple protocol (a Query's
// statement) and the extended one (a Bind of a prepared statement): what it is, what its
// parameters are, and why it is being admitted.
import type { Analysis } from '@tessera/sql';
import type { ParamSource } from '../routing/key-hash.js';

export interface Statement {
  readonly analysis: Analysis;
  /** Its bind parameters; undefined before they are known (a Describe of the statement). */
  readonly params: ParamSource | undefined;
  readonly protocol: 'simple' | 'extended';
  /** `describe`: only where it would run matters (nothing is held or counted). */
  readonly purpose: 'run' | 'describe';
}

/** A simple Query carries no parameters: a `$n` key cannot be known. */
export const NO_BIND: ParamSource = () => undefined;

export function simpleStatement(analysis: Analysis): Statement {
  return { analysis, params: NO_BIND, protocol: 'simple', purpose: 'run' };
}
