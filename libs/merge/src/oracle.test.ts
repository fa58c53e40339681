// Differential tests against real Postgres: each query's leaf SQL runs on three node databases, the
// executor merges, and the result must be byte-identical to the same query on a database holding
// all rows (column names, type OIDs, text values; SQLSTATE and message for errors).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres } from '@tessera/testkit';
import type { PgServer } from '@tessera/testkit';
import { initSqlParser } from '@tessera/sql';
import { runMerged, runWhole, setUpOracle } from './oracle.testutil.js';
import type { Oracle, Outcome } from './oracle.testutil.js';
import { CASES } from './oracle.cases.js';
import type { Case } from './oracle.cases.js';

let server: PgServer;
let oracle: Oracle;

before(async () => {
  await initSqlParser();
  server = await startPostgres({ name: 'merge-oracle' });
  oracle = await setUpOracle(server);
});

after(async () => {
  await oracle?.close();
  await server?.dispose();
});

function multiset(rows: readonly (string | null)[][] = []): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

function explain(name: string, c: Case, whole: Outcome, merged: Outcome): string {
  return `${name}: ${c.sql}\nwhole: ${JSON.stringify(whole).slice(0, 600)}\nmerged: ${JSON.stringify(merged).slice(0, 600)}`;
}

test('the corpus has at least 60 queries', () => assert.ok(Object.keys(CASES).length >= 60));

for (const [name, c] of Object.entries(CASES)) {
  test(`oracle: ${name}`, async () => {
    const params = c.params ?? [];
    const whole = await runWhole(oracle, c.sql, params);
    const merged = await runMerged(oracle, c.sql, params);
    const why = explain(name, c, whole, merged);
    switch (c.expect) {
      case 'refused':
        assert.equal(merged.kind, 'refused', why);
        assert.equal(merged.code, '0A000', why);
        return;
      case 'error':
        assert.equal(whole.kind, 'error', why);
        assert.equal(merged.kind, 'error', why);
        assert.equal(merged.code, whole.code, why);
        assert.equal(merged.message, whole.message, why);
        return;
      case 'ordered':
      case 'set':
        assert.equal(whole.kind, 'rows', why);
        assert.equal(merged.kind, 'rows', why);
        assert.deepEqual(merged.names, whole.names, why);
        assert.deepEqual(merged.types, whole.types, why);
        if (c.expect === 'ordered') assert.deepEqual(merged.rows, whole.rows, why);
        else assert.deepEqual(multiset(merged.rows), multiset(whole.rows), why);
        assert.ok((whole.rows?.length ?? 0) >= 0);
        return;
    }
  });
}
