// The differential oracle for reads across nodes: one schema with every table kind and key type,
// loaded with the same rows into plain Postgres and into a 3-node cluster through the router; a
// seeded generator's queries (TESSERA_ORACLE_SEED, TESSERA_ORACLE_COUNT) and a hand-written corpus
// run on both, each generated query under a search_path of its own (TESSERA_ORACLE_SEARCH_PATH).
// 0 wrong answers are allowed; refusals (0A000) of the base families must stay under a quarter,
// and of the families of issue 15's shapes (testing/oracle/shapes.ts, which the router plans with
// ALL_PLAN_FEATURES) under 5%. At seed 1, 5.2% of all generated queries are refused (23.5% before
// the router passed the plan options).
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
import {
  FAMILY_NAMES,
  SHAPE_FAMILY_NAMES,
  generateQuery,
  searchPathMode,
} from './testing/oracle/generator.js';
import { describeOutcome, judge, runQuery, type Verdict } from './testing/oracle/compare.js';
import { CORPUS, type ExpectedRoute } from './testing/oracle/corpus.js';

const SEED = Number(process.env['TESSERA_ORACLE_SEED'] ?? 1);
const COUNT = Number(process.env['TESSERA_ORACLE_COUNT'] ?? 4000);
const SEARCH_PATH = searchPathMode(process.env['TESSERA_ORACLE_SEARCH_PATH']);

// By default (TESSERA_ORACLE_SEARCH_PATH=shadow) a second `accounts` in schema `shadow` (a global
// table to the router), made through the router after the session logged in, comes first on some
// queries' search_path.
const SHADOW_DDL = [
  'create schema shadow',
  'create table shadow.accounts (like public.accounts)',
  "insert into shadow.accounts (id, grp, name, score) values (1, 'g1', 'shadowed', 1), (2, 'g2', 'shadowed', 2)",
];

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
  const shadow = SEARCH_PATH === 'shadow' ? SHADOW_DDL : [];
  for (const sql of [...ORACLE_DDL, ...oracleInserts(), ...shadow]) {
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
  test(`${COUNT} generated queries (seed ${SEED}): 0 wrong, under 25% of the base families and 5% of the shape families refused`, async () => {
    const counts = new Map<string, Record<Verdict, number>>();
    const wrong: string[] = [];
    let searchPath: string | undefined;
    for (let i = 0; i < COUNT; i++) {
      const q = generateQuery(SEED, i, SEARCH_PATH);
      if (q.searchPath !== undefined && q.searchPath !== searchPath) {
        for (const cl of [viaRouter, plain]) await cl.query(`set search_path to ${q.searchPath}`);
        searchPath = q.searchPath;
      }
      // Odd indexes go through the extended protocol (Parse/Bind/Describe/Execute/Sync).
      const extended = i % 2 === 1;
      const [r, p] = [await runQuery(viaRouter, q.sql, extended), await runQuery(plain, q.sql)];
      const v = judge(r, p, q.ordered);
      const fam = counts.get(q.family) ?? { pass: 0, refused: 0, wrong: 0 };
      fam[v]++;
      counts.set(q.family, fam);
      if (v === 'wrong')
        wrong.push(
          `seed=${SEED} index=${i} ${extended ? '(extended)' : '(simple)'} search_path=${q.searchPath ?? '-'}: ${q.sql}\n  router: ${describeOutcome(r)}\n  plain:  ${describeOutcome(p)}`,
        );
    }
    const total = { pass: 0, refused: 0, wrong: 0 };
    const base = { count: 0, refused: 0 };
    const shapes = { count: 0, refused: 0 };
    const lines = ['family             passed  refused  wrong'];
    for (const name of FAMILY_NAMES) {
      const f = counts.get(name) ?? { pass: 0, refused: 0, wrong: 0 };
      total.pass += f.pass;
      total.refused += f.refused;
      total.wrong += f.wrong;
      const kind = SHAPE_FAMILY_NAMES.has(name) ? shapes : base;
      kind.count += f.pass + f.refused + f.wrong;
      kind.refused += f.refused;
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
      base.refused < base.count * 0.25,
      `base families: refused ${base.refused} of ${base.count} (must be under 25%)`,
    );
    assert.ok(
      shapes.refused < shapes.count * 0.05,
      `issue 15's shape families: refused ${shapes.refused} of ${shapes.count} (must be under 5%)`,
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
