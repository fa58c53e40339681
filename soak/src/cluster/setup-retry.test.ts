import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Code, RpcError } from '@tessera/proto';
import { classifySetupError, retryEveryError, retrySetup } from './setup-retry.js';

const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

test('a dropped channel or a stepping-down coordinator is retried; a bad request is not', () => {
  assert.equal(
    classifySetupError(new RpcError(Code.UNAVAILABLE, 'Connection dropped'), 1),
    'retry',
  );
  assert.equal(classifySetupError(new RpcError(Code.DEADLINE_EXCEEDED, 'late'), 3), 'retry');
  assert.equal(classifySetupError(new RpcError(Code.INVALID_ARGUMENT, 'bad'), 1), 'fatal');
  assert.equal(classifySetupError(new RpcError(Code.FAILED_PRECONDITION, 'no'), 2), 'fatal');
});

test('ALREADY_EXISTS, 42P07 and 23505 mean done only on a retry', () => {
  assert.equal(classifySetupError(new RpcError(Code.ALREADY_EXISTS, 'node x'), 1), 'fatal');
  assert.equal(classifySetupError(new RpcError(Code.ALREADY_EXISTS, 'node x'), 2), 'done-before');
  assert.equal(classifySetupError(sqlError('42P07'), 1), 'fatal');
  assert.equal(classifySetupError(sqlError('42P07'), 2), 'done-before');
  assert.equal(classifySetupError(sqlError('23505'), 2), 'done-before');
});

test('connection-class SQLSTATEs and socket errors are retried; syntax errors are not', () => {
  assert.equal(classifySetupError(sqlError('08006'), 1), 'retry');
  assert.equal(classifySetupError(sqlError('57P01'), 1), 'retry');
  assert.equal(classifySetupError(sqlError('40001'), 1), 'retry');
  assert.equal(classifySetupError(new Error('Connection terminated unexpectedly'), 1), 'retry');
  assert.equal(classifySetupError(sqlError('42601'), 1), 'fatal');
});

test('retrySetup retries until the step succeeds, and stops at a fatal error', async () => {
  let n = 0;
  const got = await retrySetup(
    async () => {
      n++;
      if (n < 3) throw new RpcError(Code.UNAVAILABLE, 'Connection dropped');
      return 'ok';
    },
    { what: 'step', timeoutMs: 10_000 },
  );
  assert.equal(got, 'ok');
  assert.equal(n, 3);
  await assert.rejects(
    retrySetup(
      async () => {
        throw new RpcError(Code.INVALID_ARGUMENT, 'bad');
      },
      { what: 'step', timeoutMs: 10_000 },
    ),
    /bad/,
  );
});

test('with retryEveryError, a step is retried past a syntax error until it succeeds', async () => {
  let calls = 0;
  const r = await retrySetup(
    async () => {
      calls++;
      if (calls < 3) throw sqlError('42601');
      return 'read';
    },
    { what: 'probe', timeoutMs: 10_000, classify: retryEveryError },
  );
  assert.equal(r, 'read');
  assert.equal(calls, 3);
});
