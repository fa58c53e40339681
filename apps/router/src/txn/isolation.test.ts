// isSerializable: what the router can tell of a transaction's isolation level from what the
// client sent, later statements winning over BEGIN, BEGIN over the session's default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSerializable } from './isolation.js';

test('BEGIN options, SET TRANSACTION and the session default, in that order of precedence', () => {
  assert.equal(isSerializable('BEGIN', [], undefined), false);
  assert.equal(isSerializable('begin isolation level serializable', [], undefined), true);
  assert.equal(
    isSerializable('START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY', [], undefined),
    true,
  );
  assert.equal(isSerializable('begin isolation level repeatable read', [], undefined), false);
  assert.equal(
    isSerializable('begin', ['set transaction isolation level serializable'], undefined),
    true,
  );
  assert.equal(
    isSerializable(
      'begin isolation level serializable',
      ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED'],
      undefined,
    ),
    false,
  );
  // Other SETs never count, whatever their value says.
  assert.equal(
    isSerializable('begin', ["set application_name = 'serializable'"], undefined),
    false,
  );
  assert.equal(
    isSerializable('begin', [], 'set default_transaction_isolation = serializable'),
    true,
  );
  assert.equal(
    isSerializable(
      'begin',
      [],
      'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE',
    ),
    true,
  );
  assert.equal(
    isSerializable(
      'begin isolation level read committed',
      [],
      'set default_transaction_isolation = serializable',
    ),
    false,
  );
});
