// Test data: the sequences the protocol parity test (src/session-parity.test.ts) runs through each
// driver against the router and a plain Postgres. `{k1}` / `{k2}` are keys of `orders` that live
// on data1 / data2, so a sequence can put its transaction on one node, two, or none.

export interface Scenario {
  readonly name: string;
  readonly statements: readonly string[];
}

const onData1 = 'select total from orders where tenant_id = {k1} and id = 0';
const onData2 = 'select total from orders where tenant_id = {k2} and id = 0';
const bump1 = 'update orders set total = total + 1 where tenant_id = {k1} and id = 0';
const bump2 = 'update orders set total = total + 1 where tenant_id = {k2} and id = 0';

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'SET and RESET outside a transaction',
    statements: [
      "set work_mem = '8MB'",
      'show work_mem',
      'reset work_mem',
      'show work_mem',
      'set search_path = pg_catalog, public',
      "set lock_timeout = '2s'",
      'reset all',
      "set statement_timeout = '3s'",
      onData1,
    ],
  },
  {
    name: 'SET LOCAL outside a transaction',
    statements: ["set local work_mem = '8MB'", 'show work_mem'],
  },
  {
    name: 'SET with a bad value or an unknown name',
    statements: [
      "set statement_timeout = 'bogus'",
      'set no_such_setting = 1',
      'show statement_timeout',
      'select 1 as one',
    ],
  },
  {
    name: 'SET in a transaction no node holds yet, committed',
    statements: ['begin', "set work_mem = '9MB'", 'show work_mem', 'commit'],
  },
  {
    name: 'SET in a transaction no node holds yet, rolled back',
    statements: ['begin', "set work_mem = '9MB'", 'rollback'],
  },
  {
    name: 'a bad SET in a transaction no node holds yet',
    statements: ['begin', "set statement_timeout = 'bogus'", 'select 1 as one', 'rollback'],
  },
  {
    name: 'SET LOCAL in a transaction',
    statements: ['begin', "set local work_mem = '7MB'", 'show work_mem', onData1, 'commit'],
  },
  {
    name: 'SET in a one-node transaction, committed',
    statements: ['begin', onData1, "set work_mem = '5MB'", "set lock_timeout = '3s'", 'commit'],
  },
  {
    name: 'SET, then a data node, rolled back',
    statements: ['begin', "set work_mem = '5MB'", onData1, 'rollback'],
  },
  {
    name: 'SET in a one-node transaction, rolled back',
    statements: ['begin', onData1, 'set search_path = pg_catalog, public', 'rollback'],
  },
  {
    name: 'RESET in a transaction, rolled back',
    statements: ["set work_mem = '6MB'", 'begin', 'reset work_mem', 'show work_mem', 'rollback'],
  },
  {
    name: 'SET in a transaction across nodes',
    statements: ['begin', onData1, onData2, "set work_mem = '4MB'", 'commit'],
  },
  {
    name: 'SET in a transaction across nodes, rolled back',
    statements: ['begin', onData1, onData2, "set work_mem = '4MB'", 'rollback'],
  },
  {
    name: 'savepoints before a node is picked',
    statements: [
      'begin',
      'savepoint a',
      "set work_mem = '3MB'",
      'rollback to savepoint a',
      'show work_mem',
      "set work_mem = '2MB'",
      'release savepoint a',
      'commit',
    ],
  },
  {
    name: 'savepoints on a data node',
    statements: [
      'begin',
      bump1,
      'savepoint a',
      bump1,
      'rollback to savepoint a',
      onData1,
      'release savepoint a',
      'commit',
      onData1,
    ],
  },
  {
    name: 'savepoints across nodes',
    statements: [
      'begin',
      'savepoint a',
      bump1,
      bump2,
      'rollback to savepoint a',
      onData1,
      onData2,
      'commit',
    ],
  },
  {
    name: 'savepoint commands outside a transaction',
    statements: ['savepoint a', 'release savepoint a', 'rollback to savepoint a'],
  },
  {
    name: 'COMMIT and ROLLBACK outside a transaction, BEGIN twice',
    statements: ['commit', 'rollback', 'begin', 'begin', 'commit'],
  },
  {
    name: 'a failed transaction',
    statements: ['begin', 'select 1/0', "set work_mem = '1MB'", 'select 1 as one', 'commit'],
  },
  {
    name: 'a failed one-node transaction',
    statements: ['begin', bump1, 'select 1/0 from orders where tenant_id = {k1}', bump1, 'commit'],
  },
  {
    name: 'ROLLBACK TO recovers a failed transaction',
    statements: [
      'begin',
      onData1,
      'savepoint a',
      'select 1/0',
      'rollback to savepoint a',
      'select 1 as one',
      'commit',
    ],
  },
  {
    name: 'DISCARD ALL',
    statements: [
      "set work_mem = '3MB'",
      'discard all',
      'show work_mem',
      'begin',
      'DISCARD ALL',
      'rollback',
    ],
  },
  {
    name: 'DEALLOCATE',
    statements: [
      'deallocate no_such_statement',
      'deallocate all',
      'begin',
      'DEALLOCATE no_such_statement',
      'rollback',
    ],
  },
  {
    name: 'COMMIT AND CHAIN before a node is picked',
    statements: [
      'begin isolation level repeatable read',
      "set work_mem = '5MB'",
      'commit and chain',
      'show transaction_isolation',
      'commit',
    ],
  },
  {
    name: 'COMMIT AND CHAIN on a node',
    statements: [
      'begin isolation level repeatable read',
      onData1,
      'commit and chain',
      'show transaction_isolation',
      onData1,
      'commit',
    ],
  },
  {
    name: 'BEGIN with options',
    statements: [
      'begin isolation level serializable read only',
      'show transaction_isolation',
      onData1,
      'show transaction_read_only',
      'commit',
    ],
  },
  {
    name: 'an uncommitted write when the client leaves',
    statements: ['begin', 'insert into orders (tenant_id, id, total) values ({k1}, 99, 1)'],
  },
];

/**
 * A temporary table lives in its backend: the client keeps that backend while the table exists,
 * and no later client may see it. Run after the others (a table that leaked would be seen by all).
 */
export const TEMP_TABLE: Scenario = {
  name: 'a temporary table',
  statements: [
    'create temp table parity_tmp (x int)',
    'insert into parity_tmp values (1)',
    'select x from parity_tmp',
    'discard temp',
    'create temp table parity_tmp (y int)',
    'select y from parity_tmp',
  ],
};

/** What the client that ran a scenario sees of its settings at the end (home and each data node). */
export const FINAL_CHECKS: readonly string[] = [
  'show work_mem',
  'show search_path',
  'show statement_timeout',
  'show transaction_isolation',
  'show lock_timeout',
  "select current_setting('work_mem') as w, current_setting('search_path') as s, current_setting('lock_timeout') as l from orders where tenant_id = {k1} and id = 0",
  "select current_setting('work_mem') as w, current_setting('search_path') as s, current_setting('lock_timeout') as l from orders where tenant_id = {k2} and id = 0",
];

/** What the next client sees (on the same backend, with --pool-size 1): nothing of the last. */
export const NEXT_CLIENT_CHECKS: readonly string[] = [
  ...FINAL_CHECKS,
  'select count(*)::int as n from orders where tenant_id = {k1} and id = 99',
  'select x from parity_tmp',
  'select txid_current_if_assigned() is null as no_transaction',
];
