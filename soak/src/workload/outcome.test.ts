import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSyncRepWarning, outcomeOfError } from './outcome.js';

test('an error before COMMIT was sent is a failure, whatever it is', () => {
  for (const code of ['08006', '57P01', 'XX000', '40001', undefined])
    assert.equal(outcomeOfError({ code }, 'before-commit'), 'fail');
  assert.equal(outcomeOfError({ timedOut: true }, 'before-commit'), 'fail');
});

test('at the commit point, errors that say nothing committed are failures', () => {
  for (const code of [
    '40001',
    '40P01',
    '23505',
    '23514',
    '0A000',
    '22003',
    '42P01',
    '25P02',
    '53300',
  ])
    assert.equal(outcomeOfError({ code }, 'commit'), 'fail', code);
});

test('at the commit point, a lost connection, a timeout, 08xxx, 57P0x and 40003 are unknown', () => {
  for (const code of ['08006', '08007', '08003', '57P01', '57P02', '57P03', '40003'])
    assert.equal(outcomeOfError({ code }, 'commit'), 'info', code);
  assert.equal(outcomeOfError({}, 'commit'), 'info');
  assert.equal(outcomeOfError({ timedOut: true, code: '57014' }, 'commit'), 'info');
});

test('an unexpected SQLSTATE at the commit point is unknown, not a failure', () => {
  assert.equal(outcomeOfError({ code: 'XX000' }, 'commit'), 'info');
  assert.equal(outcomeOfError({ code: '57014' }, 'commit'), 'info');
});

test('the sync-replication cancel warning is recognised', () => {
  assert.ok(
    isSyncRepWarning({
      code: '01000',
      message: 'canceling wait for synchronous replication due to user request',
    }),
  );
  assert.ok(!isSyncRepWarning({ code: '01000', message: 'something else' }));
});
