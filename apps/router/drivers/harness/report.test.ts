// What the run prints and writes: cells of the compatibility table, the failures with both
// sides, and docs/compatibility.md's sections.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareClient, parseOutput, type KnownDifference } from './compare.js';
import { cell, compatibilityDoc, failures, summaryTable, type ClientRun } from './report.js';
import { digest } from './state.js';

const refused: KnownDifference = {
  client: 'drv',
  op: 'b',
  reason: 'reads across nodes in a transaction are refused',
  issue: 15,
  router: 'ERROR 0A000',
};
const wrong: KnownDifference = {
  client: 'drv',
  op: 'c',
  reason: 'serial ids repeat across nodes',
  issue: 14,
  router: '[1,1]',
};

function run(routerOut: string, known: KnownDifference[]): ClientRun {
  return {
    comparison: compareClient(
      'drv',
      parseOutput('a\t1\nb\t2\nc\t[1,2]\n'),
      parseOutput(routerOut),
      known,
    ),
    title: 'a driver',
    group: 'Drivers',
    versions: ['drv 1.0'],
    plainMs: 1000,
    routerMs: 2000,
  };
}

describe('report', () => {
  const ok = run('a\t1\nb\tERROR 0A000\nc\t[1,1]\n', [refused, wrong]);

  test('cells: same, a refusal by its SQLSTATE, a different answer', () => {
    assert.deepEqual(ok.comparison.verdicts.map(cell), ['✓', '`0A000`', '≠']);
  });

  test('a passing run has no failures and says pass', () => {
    assert.deepEqual(failures([ok]), []);
    assert.match(summaryTable([ok]), /drv\s+3\s+1\s+2\s+0\s+0\s+0\s+0\s+1\.0\s+2\.0\s+pass/);
  });

  test('every failure shows both sides', () => {
    const bad = run('a\t2\nb\tERROR 0A000\nc\t[1,2]\n', [refused, wrong]);
    const f = failures([bad]);
    assert.equal(f.length, 2);
    assert.match(f[0] ?? '', /drv a: differs and is not listed\n {2}plain: {2}1\n {2}router: 2/);
    assert.match(f[1] ?? '', /drv c: listed, but the router now answers as plain Postgres does/);
  });

  test('the document lists the table, wrong answers first, then refusals with reasons', () => {
    const doc = compatibilityDoc([ok], [refused, wrong]);
    assert.match(doc, /\| operation \| drv \|/);
    assert.match(doc, /\| `b` \| `0A000` \|/);
    const wrongAt = doc.indexOf('## Answers that differ without an error');
    const refusedAt = doc.indexOf('## Still refused, and why');
    assert.ok(wrongAt > 0 && refusedAt > wrongAt);
    assert.match(
      doc.slice(wrongAt, refusedAt),
      /serial ids repeat across nodes \(issue 14\): drv `c`/,
    );
    assert.match(
      doc.slice(refusedAt),
      /reads across nodes in a transaction are refused \(issue 15\): drv `b`/,
    );
  });
});

describe('state digest', () => {
  test('does not depend on row order', () => {
    assert.equal(digest(['(1,a)', '(2,b)']), digest(['(2,b)', '(1,a)']));
    assert.notEqual(digest(['(1,a)']), digest(['(1,b)']));
    assert.match(digest([]), /^rows=0 md5=/);
  });
});
