// Protocol parity: every session command (BEGIN, COMMIT, ROLLBACK, savepoints, SET, SET LOCAL,
// RESET, DISCARD, DEALLOCATE), inside and outside a transaction, through node-postgres simple
// queries, node-postgres named statements and postgres.js, against the router and a plain
// Postgres: the same tags, rows, SQLSTATEs and notices, the same settings at the end on every
// node; and, with --pool-size 1, the next client on the same backend sees nothing of the last
// one (settings, prepared statements, temporary tables, an open transaction).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BackendCode, Writer, writeBind, writeExecute, writeSync } from '@tessera/pg-wire';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { keysByNode } from './testing/keys.js';
import { RawClient } from './testing/raw-client.js';
import { DRIVER_MODES, openDriver, preparedNameOf, type Outcome } from './testing/drivers.js';
import {
  FINAL_CHECKS,
  NEXT_CLIENT_CHECKS,
  SCENARIOS,
  TEMP_TABLE,
  type Scenario,
} from './testing/parity-scenarios.js';

let c: TestCluster;
let plain: PgServer;
let keys: { k1: number; k2: number };

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null, total int not null default 0)',
];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({ router: { poolSize: 1 } }),
    startPostgres({ name: 'parity-plain' }),
  ]);
  const byNode = keysByNode(c.router, 'orders');
  keys = { k1: byNode.get('data1')![0]!, k2: byNode.get('data2')![0]! };
  const rows = `insert into orders (tenant_id, id) values (${keys.k1}, 0), (${keys.k2}, 0)`;
  const router = await openDriver('pg-simple', c.url());
  for (const sql of [...SETUP, rows]) assert.equal((await router.run(sql)).sqlstate, undefined);
  await router.end();
  for (const sql of [...SETUP, rows]) await plain.query(sql);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const withKeys = (sql: string): string =>
  sql.replaceAll('{k1}', String(keys.k1)).replaceAll('{k2}', String(keys.k2));

/** Runs `statements` on a fresh session of `mode`, then `checks` on the same session. */
async function runAll(
  mode: (typeof DRIVER_MODES)[number],
  url: string,
  statements: readonly string[],
): Promise<Outcome[]> {
  const session = await openDriver(mode, url);
  const out: Outcome[] = [];
  try {
    for (const sql of statements) out.push(await session.run(withKeys(sql)));
  } finally {
    await session.end().catch(() => undefined);
  }
  return out;
}

/** A Bind of a statement the previous client prepared: the next client must not have it. */
async function bindOfPrevious(port: number, name: string): Promise<string[]> {
  const raw = await RawClient.login(port);
  try {
    const w = new Writer(64);
    writeBind(w, { statement: name });
    writeExecute(w);
    writeSync(w);
    raw.send(w.flush());
    await raw.until((f) => f.code === BackendCode.ReadyForQuery);
    return raw.errors();
  } finally {
    raw.end();
  }
}

/** Reverts what a scenario may have changed in the rows the checks read. */
async function resetRows(): Promise<void> {
  const statements = [
    'update orders set total = 0 where id = 0',
    'delete from orders where id = 99',
  ];
  const router = await openDriver('pg-simple', c.url());
  for (const sql of statements) assert.equal((await router.run(sql)).sqlstate, undefined, sql);
  await router.end();
  for (const sql of statements) await plain.query(sql);
}

function diff(router: readonly Outcome[], plainOut: readonly Outcome[]): string {
  const lines: string[] = [];
  for (let i = 0; i < Math.max(router.length, plainOut.length); i++) {
    const r = JSON.stringify({ ...router[i], sql: undefined, message: undefined });
    const p = JSON.stringify({ ...plainOut[i], sql: undefined, message: undefined });
    if (r === p) continue;
    const said = (o: Outcome | undefined): string => (o?.message ? ` (${o.message})` : '');
    lines.push(
      `  ${router[i]?.sql ?? plainOut[i]?.sql}\n    router:   ${r}${said(router[i])}\n    postgres: ${p}${said(plainOut[i])}`,
    );
  }
  return lines.join('\n');
}

type Mode = (typeof DRIVER_MODES)[number];

/**
 * Differences this test found in the router before its session commands were written once for
 * both protocols (each one a bug, fixed by the commit that removes it from here).
 */
async function compare(mode: Mode, scenario: Scenario): Promise<void> {
  const sequence = [...scenario.statements, ...FINAL_CHECKS];
  const viaRouter = await runAll(mode, c.url(), sequence);
  const viaPlain = await runAll(mode, plain.url(), sequence);
  const differences = diff(viaRouter, viaPlain);
  // The next client, on the same backend (--pool-size 1): nothing of the last one.
  const nextRouter = await runAll('pg-simple', c.url(), NEXT_CLIENT_CHECKS);
  const nextPlain = await runAll('pg-simple', plain.url(), NEXT_CLIENT_CHECKS);
  const leaks = diff(nextRouter, nextPlain);
  let statementLeak = '';
  if (mode === 'pg-named') {
    const name = preparedNameOf(withKeys(scenario.statements[0]!));
    const r = await bindOfPrevious(c.router.port, name);
    const p = await bindOfPrevious(plain.port, name);
    if (JSON.stringify(r) !== JSON.stringify(p))
      statementLeak = `  Bind of "${name}": router ${r.join(',')}, postgres ${p.join(',')}`;
  }
  await resetRows();
  // A leak would be seen by every later scenario too: start them on fresh backends.
  if (leaks !== '' || statementLeak !== '') await c.restartRouter();
  assert.ok(
    differences === '' && leaks === '' && statementLeak === '',
    `${differences ? `the client saw:\n${differences}\n` : ''}${leaks ? `the next client saw:\n${leaks}\n` : ''}${statementLeak}`,
  );
}

function scenarioTest(mode: Mode, scenario: Scenario): void {
  test(scenario.name, () => compare(mode, scenario));
}

for (const mode of DRIVER_MODES) {
  describe(`session commands through ${mode}: router = Postgres`, () => {
    for (const scenario of SCENARIOS) scenarioTest(mode, scenario);
  });
}

describe('temporary tables: kept by their client, seen by no other', () => {
  for (const mode of DRIVER_MODES) scenarioTest(mode, { ...TEMP_TABLE, name: TEMP_TABLE.name });
});
