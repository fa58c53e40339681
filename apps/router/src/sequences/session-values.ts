// currval() and lastval() as Postgres keeps them: per session, the last value this session got
// from each sequence, and which sequence it drew from last (docs/architecture.md, "Sequences").
import { RouterError } from '../errors.js';
import type { SequenceDef } from './blocks.js';

interface SessionValues {
  readonly bySequence: Map<string, bigint>;
  last: bigint | undefined;
}

const sessions = new WeakMap<object, SessionValues>();

function of(session: object): SessionValues {
  let v = sessions.get(session);
  if (v === undefined) sessions.set(session, (v = { bySequence: new Map(), last: undefined }));
  return v;
}

/** `session` got `value` from `seq` (the last of a statement's values is what currval says). */
export function noteValue(session: object, seq: SequenceDef, value: bigint): void {
  const v = of(session);
  v.bySequence.set(seq.key, value);
  v.last = value;
}

/** currval(seq) for `session`; 55000 as Postgres says it before any nextval of it here. */
export function currval(session: object, seq: SequenceDef): bigint {
  const value = sessions.get(session)?.bySequence.get(seq.key);
  if (value === undefined)
    throw new RouterError(
      '55000',
      `currval of sequence "${seq.name.slice(seq.name.indexOf('.') + 1)}" is not yet defined in this session`,
    );
  return value;
}

/** lastval() for `session`; 55000 before any nextval in it. */
export function lastval(session: object): bigint {
  const value = sessions.get(session)?.last;
  if (value === undefined)
    throw new RouterError('55000', 'lastval is not yet defined in this session');
  return value;
}

/** Whether `session` got any value from the router's sequences. */
export function hasLastval(session: object): boolean {
  return sessions.get(session)?.last !== undefined;
}
