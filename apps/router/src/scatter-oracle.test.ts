// The differential oracle for reads across nodes: one schema with every table kind and key type,
// loaded with the same rows into plain Postgres and into a 3-node cluster through the router; a
// seeded generator's queries (TESSERA_ORACLE_SEED, TESSERA_ORACLE_COUNT) and a hand-written corpus
// run on both. 0 wrong answers are allowed; refusals (0A000) must stay under a quarter.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import {
  ORACLE_DDL,
  ORACLE_KEYSPACES,
  ORACLE_TABLES,
  oracleInserts,
} from './testing/oracle/schema.js';
import { FAMILY_NAMES, generateQuery } from './testing/oracle/generator.js';
import { describeOutcome, judge, runQuery, type Verdict } from './testing/oracle/compare.js';
import { CORPUS, type ExpectedRoute } from './testing/oracle/corpus.js';

const SEED = Number(process.env['TESSERA_ORACLE_SEED'] ?? 1);
const COUNT = Number(process.env['TESSERA_ORACLE_COUNT'] ?? 4000);

let c: TestCluster;
let plainServer: PgServer;
let viaRouter: pg.Client;
let plain: pg.Client;

before(async () => {
  [c, plainServer] = await Promise.all([
    startTestCluster({ keyspaces: ORACLE_KEYSPACES, tables: ORACLE_TABLES }),
    startPostgres({ name: 'oracle-plain' }),
  ]);
  viaRouter = new pg.Client({ connectionString: c.url() });
  plain = await plainServer.connect();
  await viaRouter.connect();
  for (const sql of [...ORACLE_DDL, ...oracleInserts()]) {
    await plain.query(sql);
    await viaRouter.query(sql);
  }
  for (const cl of [plain, viaRouter]) await cl.query('analyze');
});

after(async () => {
  await viaRouter?.end();
  await plain?.end();
  await c?.dispose();
  await plainServer?.dispose();
});

async function routeCounts(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/tessera_router_statements_total\{route="(\w+)"[^}]*\} (\d+)/g))
    out.set(m[1]!, Number(m[2]));
  return out;
}

const ROUTE_LABEL: Record<ExpectedRoute, string> = {
  single: 'single',
  scatter: 'scatter',
  home: 'home',
  refuse: 'refused',
};

describe('differential oracle: router vs plain Postgres', () => {
  test(`${COUNT} generated queries (seed ${SEED}): 0 wrong, under 25% refused`, async () => {
    const counts = new Map<string, Record<Verdict, number>>();
    const wrong: string[] = [];
    for (let i = 0; i < COUNT; i++) {
      const q = generateQuery(SEED, i);
      // Odd indexes go through the extended protocol (Parse/Bind/Describe/Execute/Sync).
      const extended = i % 2 === 1;
      const [r, p] = [await runQuery(viaRouter, q.sql, extended), await runQuery(plain, q.sql)];
      const v = judge(r, p, q.ordered);
      const fam = counts.get(q.family) ?? { pass: 0, refused: 0, wrong: 0 };
      fam[v]++;
      counts.set(q.family, fam);
      if (v === 'wrong')
        wrong.push(
          `seed=${SEED} index=${i} ${extended ? '(extended)' : '(simple)'}: ${q.sql}\n  router: ${describeOutcome(r)}\n  plain:  ${describeOutcome(p)}`,
        );
    }
    const total = { pass: 0, refused: 0, wrong: 0 };
    const lines = ['family             passed  refused  wrong'];
    for (const name of FAMILY_NAMES) {
      const f = counts.get(name) ?? { pass: 0, refused: 0, wrong: 0 };
      total.pass += f.pass;
      total.refused += f.refused;
      total.wrong += f.wrong;
      lines.push(
        `${name.padEnd(18)} ${String(f.pass).padStart(6)}  ${String(f.refused).padStart(7)}  ${String(f.wrong).padStart(5)}`,
      );
    }
    lines.push(
      `${'total'.padEnd(18)} ${String(total.pass).padStart(6)}  ${String(total.refused).padStart(7)}  ${String(total.wrong).padStart(5)}`,
    );
    console.log(lines.join('\n'));
    assert.equal(wrong.length, 0, `wrong answers:\n${wrong.slice(0, 30).join('\n')}`);
    assert.ok(
      total.refused < COUNT * 0.25,
      `refused ${total.refused} of ${COUNT} (must be under 25%)`,
    );
  });

  test('the hand-written corpus has at least 60 named queries', () => {
    assert.ok(Object.keys(CORPUS).length >= 60);
  });

  for (const [name, q] of Object.entries(CORPUS)) {
    test(`corpus: ${name} (${q.route})`, async () => {
      const before = await routeCounts();
      const r = await runQuery(viaRouter, q.sql);
      const afterCounts = await routeCounts();
      const p = await runQuery(plain, q.sql);
      const label = ROUTE_LABEL[q.route];
      const grew = [...afterCounts].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k]) => k);
      assert.deepEqual(grew, [label], `${q.sql}: routes counted ${JSON.stringify(grew)}`);
      const v = judge(r, p, q.ordered ?? false);
      const why = `${q.sql}\n  router: ${describeOutcome(r)}\n  plain:  ${describeOutcome(p)}`;
      if (q.route === 'refuse') {
        assert.equal(v, 'refused', why);
        assert.ok((r.message ?? '').length > 10, why);
      } else assert.equal(v, 'pass', why);
    });
  }
});
