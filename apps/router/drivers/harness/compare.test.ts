// The ratchet: a difference not listed fails, a listed one that changed fails, a listed one that
// is gone fails; --update only ever removes entries or takes a changed router line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkKnown,
  compareClient,
  errorsIn,
  parseOutput,
  passes,
  recordedKnown,
  refusals,
  updatedKnown,
  type KnownDifference,
} from './compare.js';

const known = (op: string, router: string): KnownDifference => ({
  client: 'c',
  op,
  reason: 'because',
  issue: 15,
  router,
});

describe('refusals', () => {
  test('errors the router reported that Postgres did not', () => {
    assert.deepEqual(refusals('5', 'ERROR 0A000'), ['0A000']);
    assert.deepEqual(
      refusals('BEGIN ¶ 1 ¶ COMMIT', 'BEGIN ¶ ERROR 0A000 ¶ ERROR 25P02 ¶ ROLLBACK'),
      ['0A000', '25P02'],
    );
    assert.deepEqual(refusals('caught 57014', 'caught 0A000'), ['0A000']);
    assert.deepEqual(refusals('1', 'ERROR client:InterfaceError'), ['client:InterfaceError']);
  });
  test('none when the router answered without an error of its own', () => {
    assert.deepEqual(refusals('caught 57014', 'no error: [[20]]'), []);
    assert.deepEqual(refusals('INSERT 0 1 ¶ ERROR 23505', 'INSERT 0 1 ¶ INSERT 0 1'), []);
    assert.deepEqual(errorsIn('ERROR 0A000 ¶ ERROR 42P01'), ['0A000', '42P01']);
    assert.deepEqual(errorsIn('ERROR exit=2 processed=0/120'), ['error']);
    assert.deepEqual(errorsIn('accounts=8/3c63 account_totals=ERROR'), ['error']);
    assert.deepEqual(errorsIn('ERROR 0A000 (line 27)'), ['0A000']);
  });
});

describe('parseOutput', () => {
  test('operations, meta lines, malformed and repeated lines', () => {
    const out = parseOutput('@version x 1\na\t1\r\nb\tERROR 0A000\n\nno tab here\na\t2\n');
    assert.deepEqual(out.lines, [
      { op: 'a', value: '1' },
      { op: 'b', value: 'ERROR 0A000' },
    ]);
    assert.deepEqual(out.meta, ['version x 1']);
    assert.equal(out.malformed.length, 2);
  });
});

describe('compareClient', () => {
  const plain = parseOutput('a\t1\nb\t2\nc\t3\nd\t4\n');
  const router = parseOutput('a\t1\nb\tERROR 0A000\nc\t30\nd\t4\ne\textra\n');

  test('classifies every operation against the list', () => {
    const c = compareClient('c', plain, router, [
      known('b', 'ERROR 0A000'),
      known('c', 'ERROR 0A000'),
      known('d', 'x'),
    ]);
    assert.deepEqual(
      c.verdicts.map((v) => [v.op, v.kind]),
      [
        ['a', 'same'],
        ['b', 'known'],
        ['c', 'changed'],
        ['d', 'fixed'],
        ['e', 'new'],
      ],
    );
    assert.equal(passes(c), false);
  });

  test('passes when exactly the listed differences occur', () => {
    const c = compareClient('c', plain, parseOutput('a\t1\nb\tERROR 0A000\nc\t3\nd\t4\n'), [
      known('b', 'ERROR 0A000'),
    ]);
    assert.equal(passes(c), true);
  });

  test('an entry for an operation nobody printed is stale and fails', () => {
    const c = compareClient('c', plain, plain, [known('zz', 'ERROR 0A000')]);
    assert.equal(c.stale.length, 1);
    assert.equal(passes(c), false);
  });

  test('entries of other clients do not count', () => {
    const c = compareClient('c', plain, plain, [{ ...known('a', '9'), client: 'other' }]);
    assert.equal(passes(c), true);
  });

  test('a failure against plain Postgres is a program error, listed or not', () => {
    const p = parseOutput('a\tERROR 42601\nexit\texit 1\n');
    const c = compareClient('c', p, p, []);
    assert.equal(c.programErrors.length, 2);
    assert.equal(passes(c), false);
  });

  test('a line missing on one side compares as <missing>', () => {
    const c = compareClient('c', plain, parseOutput('a\t1\n'), []);
    const b = c.verdicts.find((v) => v.op === 'b');
    assert.deepEqual(b, { kind: 'new', op: 'b', plain: '2', router: '<missing>' });
  });
});

describe('updating the list', () => {
  const plain = parseOutput('a\t1\nb\t2\nc\t3\n');
  const router = parseOutput('a\t1\nb\tERROR 0A000\nc\t30\nd\tnew\n');
  const list = [known('a', 'ERROR 0A000'), known('b', 'ERROR 0A000'), known('c', 'ERROR XX000')];
  const results = [compareClient('c', plain, router, list)];

  test('--update drops what no longer occurs, takes changed lines, adds nothing', () => {
    const next = updatedKnown(list, results);
    assert.deepEqual(
      next.map((k) => [k.op, k.router]),
      [
        ['b', 'ERROR 0A000'],
        ['c', '30'],
      ],
    );
  });

  test('--record adds new differences with an empty reason, which the file check rejects', () => {
    const next = recordedKnown(list, results);
    assert.deepEqual(
      next.map((k) => k.op),
      ['b', 'c', 'd'],
    );
    assert.deepEqual(checkKnown(next), [
      'c d needs a one-line reason',
      'c d needs an issue number',
    ]);
  });

  test('entries of clients that did not run are kept', () => {
    const other = { ...known('x', 'y'), client: 'other' };
    assert.deepEqual(updatedKnown([other], results), [other]);
  });

  test('an entry listed twice is a problem', () => {
    assert.deepEqual(checkKnown([known('a', '1'), known('a', '2')]), ['c a is listed twice']);
  });
});
