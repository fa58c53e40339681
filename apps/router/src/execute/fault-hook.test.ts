// TESSERA_FAULT_2PC parsing: unset means no hook at all; a value that names no fault point or
// action is refused, so a typo cannot make a kill test pass without killing anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../errors.js';
import { faultHook, parseFault } from './fault-hook.js';

test('unset or empty: no fault, and the router passes no hook', () => {
  assert.equal(parseFault({}), undefined);
  assert.equal(parseFault({ TESSERA_FAULT_2PC: '' }), undefined);
  assert.equal(process.env['TESSERA_FAULT_2PC'] ?? '', '', 'this test runs without the knob');
  assert.equal(faultHook, undefined);
});

test('every fault point of @tessera/twopc, with kill by default or stop', () => {
  for (const point of [
    'before-prepare',
    'after-prepare:data1',
    'after-decision',
    'after-commit:node_2',
    'after-all',
  ])
    assert.deepEqual(parseFault({ TESSERA_FAULT_2PC: point }), { point, action: 'kill' });
  assert.deepEqual(
    parseFault({ TESSERA_FAULT_2PC: 'after-decision', TESSERA_FAULT_2PC_ACTION: 'stop' }),
    { point: 'after-decision', action: 'stop' },
  );
});

test('anything else is a ConfigError', () => {
  for (const env of [
    { TESSERA_FAULT_2PC: 'after-prepare' },
    { TESSERA_FAULT_2PC: 'after-prepare:' },
    { TESSERA_FAULT_2PC: 'during-decision' },
    { TESSERA_FAULT_2PC: 'after-all', TESSERA_FAULT_2PC_ACTION: 'pause' },
  ])
    assert.throws(() => parseFault(env), ConfigError, JSON.stringify(env));
});
