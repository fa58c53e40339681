// The error edge: any error carrying a SQLSTATE becomes an ErrorResponse with it; a node's own
// error keeps its fields; anything else is XX000, marked internal (the session logs its stack).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from '@tessera/pg-wire';
import { SqlError } from '@tessera/sql';
import { KeyValueError } from '@tessera/pg-hash';
import { MergeError } from '@tessera/merge';
import { BackendError } from '../pool/backend.js';
import { RouterError } from '../errors.js';
import { CopyDataError } from '../copy/copy-rows.js';
import { errorFields } from './errors-wire.js';

test('typed errors keep their SQLSTATE, whatever their class', () => {
  const cases: [unknown, string][] = [
    [new CopyDataError('missing data for column "k"'), '22P04'],
    [new RouterError('0A000', 'no'), '0A000'],
    [new KeyValueError('22P02', 'invalid input syntax for type bigint: "x"'), '22P02'],
    [new MergeError('22012', 'division by zero'), '22012'],
  ];
  for (const [e, code] of cases) {
    const { fields, fatal, internal } = errorFields(e);
    assert.equal(fields.code, code, String(e));
    assert.equal(fields.message, (e as Error).message);
    assert.equal(fields.severity, 'ERROR');
    assert.equal(fatal, false);
    assert.equal(internal, false);
  }
});

test('a parse error keeps its position; a node error all its fields; FATAL closes', () => {
  let parseError: unknown;
  try {
    throw new SqlError('42601', 'syntax error at or near "selec"', 1);
  } catch (e) {
    parseError = e;
  }
  const p = errorFields(parseError).fields;
  assert.equal(p.code, '42601');
  assert.equal(p.position, '1');
  const node = errorFields(
    new BackendError({ severity: 'ERROR', code: '23505', message: 'dup', detail: 'Key (k)=(1)' }),
  );
  assert.deepEqual(node.fields, {
    severity: 'ERROR',
    code: '23505',
    message: 'dup',
    detail: 'Key (k)=(1)',
  });
  assert.equal(errorFields(new ProtocolError('bad frame')).fatal, true);
  assert.equal(errorFields(new RouterError('57P01', 'bye', 'FATAL')).fatal, true);
});

test('anything without a SQLSTATE is XX000 and internal', () => {
  for (const e of [new TypeError('x is undefined'), 'a string', { sqlstate: 'nope' }, undefined]) {
    const { fields, internal } = errorFields(e);
    assert.equal(fields.code, 'XX000');
    assert.equal(fields.message, 'internal error in the router');
    assert.equal(internal, true);
  }
});
