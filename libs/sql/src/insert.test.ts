// INSERT analysis and splitting: rows, values, and rebuildInsert's exactness checked by parsing
// the rebuilt statement and comparing its tree with the original's, restricted to the same rows.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseSync } from 'libpg-query';
import { initSqlParser, analyze, rebuildInsert, rebuildInsertRenumbered } from './index.js';
import type { InsertAnalysis } from './index.js';
import { assertSubset } from './subset.testutil.js';

await initSqlParser();

function insert(sql: string): InsertAnalysis {
  const a = analyze(sql);
  assert.equal(a.kind, 'insert');
  return a as InsertAnalysis;
}

const c = (text: string | null) => ({ kind: 'const', text });
const p = (index: number) => ({ kind: 'param', index, isArray: false });

const cases: Array<[string, Record<string, unknown>]> = [
  [
    "insert into t (id, name) values (1, 'a')",
    {
      columns: ['id', 'name'],
      source: 'values',
      rows: [[c('1'), c('a')]],
      rowSlices: ["(1, 'a')"],
      tables: [{ name: 't', role: 'target', scope: 'top' }],
      targetIndex: 0,
      fromSelect: false,
    },
  ],
  ['insert into t values (1)', { columns: undefined, rows: [[c('1')]] }],
  [
    'insert into t (a, b) values ($1, $2), ($3, $4)',
    {
      rows: [
        [p(0), p(1)],
        [p(2), p(3)],
      ],
      paramCount: 4,
      rowSlices: ['($1, $2)', '($3, $4)'],
    },
  ],
  [
    'insert into t (a, b) values (1, default), ($1, now())',
    {
      rows: [
        [c('1'), { kind: 'default' }],
        [p(0), { kind: 'expr' }],
      ],
      functions: ['now'],
    },
  ],
  [
    "insert into t (a) values (-3), ('x'::uuid), ($1::bigint)",
    {
      rows: [
        [c('-3')],
        [{ kind: 'const', text: 'x', typeName: 'uuid' }],
        [{ kind: 'param', typeName: 'int8' }],
      ],
    },
  ],
  ['insert into t (a) values (null)', { rows: [[{ kind: 'const', text: null, literal: 'null' }]] }],
  [
    'insert into t default values',
    { source: 'default_values', rows: undefined, rowSlices: undefined },
  ],
  [
    'insert into t (a) select a from u where k = 1',
    {
      source: 'select',
      fromSelect: true,
      rows: undefined,
      tables: [
        { name: 't', role: 'target' },
        { name: 'u', role: 'read', scope: 'top' },
      ],
      select: { where: { pins: [{ table: 'u', tableIndex: 1, column: 'k' }] } },
    },
  ],
  ['insert into t select * from (values (1), (2)) v', { source: 'select', fromSelect: true }],
  ['insert into t values (1) limit 1', { source: 'select' }],
  [
    'insert into t (a) values (1) on conflict do nothing',
    { onConflict: { action: 'nothing', columns: [], updateColumns: [] } },
  ],
  [
    'insert into t (a, b) values (1, 2) on conflict (a) do update set b = excluded.b, c = 1',
    { onConflict: { action: 'update', columns: ['a'], updateColumns: ['b', 'c'] } },
  ],
  [
    'insert into t (a) values (1) on conflict on constraint t_pkey do nothing',
    { onConflict: { constraint: 't_pkey' } },
  ],
  ['insert into t (a) values (1) returning *', { hasReturning: true, onConflict: undefined }],
  ['insert into t as x (a) values (1)', { tables: [{ name: 't', alias: 'x' }] }],
  [
    'insert into s."T" ("Id") values (1)',
    { tables: [{ schema: 's', name: 'T' }], columns: ['Id'] },
  ],
  ['insert into t (id) overriding system value values (1)', { overriding: 'system' }],
  [
    'with x as (select 1) insert into t (a) values ((select * from x))',
    { hasCtes: true, hasSubqueries: true, rows: [[{ kind: 'expr' }]] },
  ],
];

for (const [sql, expected] of cases) {
  test(`insert: ${sql}`, () => assertSubset(insert(sql), expected));
}

const LOCATION_KEYS = new Set([
  'location',
  'stmt_len',
  'stmt_location',
  'rexpr_list_start',
  'rexpr_list_end',
  'list_start',
  'list_end',
]);

function stripLocations(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripLocations);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (!LOCATION_KEYS.has(k)) out[k] = stripLocations(x);
    return out;
  }
  return v;
}

/** The original tree with only `rows` kept in its VALUES list. */
function expectedTree(sql: string, rows: number[]): unknown {
  const tree = structuredClone(parseSync(sql).stmts?.[0]?.stmt) as unknown as {
    InsertStmt: { selectStmt: { SelectStmt: { valuesLists: unknown[] } } };
  };
  const s = tree.InsertStmt.selectStmt.SelectStmt;
  s.valuesLists = rows.map((i) => s.valuesLists[i]);
  return stripLocations(tree);
}

const rebuildCases: Array<[string, number[][]]> = [
  [
    'insert into t (a, b) values (1, 2), (3, 4), (5, 6)',
    [[0], [1], [2], [0, 2], [2, 0], [0, 1, 2]],
  ],
  [
    "INSERT INTO \"Weird Table\" (\"Col,1\", \"x)y\") VALUES ('a,b', '(c)'),('$1', $1),( 2 , '''')",
    [[0], [1], [2], [1, 2]],
  ],
  [
    "insert into t (a, b) values ($1, 'x, y)'), ($2, $$dollar ) , ( $$), ($3, E'\\'(') on conflict (a) do update set b = excluded.b || ')' returning a, b",
    [[0], [1], [2], [2, 0]],
  ],
  [
    'with src as (select 1 as v) insert into t (a) values ((select v from src)), (2) returning *',
    [[0], [1]],
  ],
  ['insert into t values (1, /* ), ( */ 2), -- c\n (3, 4)', [[0], [1]]],
  [
    'insert into t (a) values (ARRAY[1,2]), (row(1, (2))), (\'{"a": [1, 2]}\'::jsonb)',
    [[0], [1], [2], [2, 1]],
  ],
  ['insert into t (a, b) values (1, default), (2, now()) on conflict do nothing', [[1]]],
  [
    'insert into "Sch"."T" as x (id) overriding user value values (1), (2) on conflict (id) where id > 0 do update set id = x.id returning id',
    [[1], [0]],
  ],
  ["insert into t (name) values ('ünïcödé'), ('日本語'), ('😀, x')", [[0], [1], [2], [2, 0]]],
];

for (const [sql, selections] of rebuildCases) {
  test(`rebuildInsert exact: ${sql.slice(0, 60)}`, () => {
    const a = insert(sql);
    for (const rows of selections) {
      const rebuilt = rebuildInsert(a, rows);
      assert.deepEqual(
        stripLocations(parseSync(rebuilt).stmts?.[0]?.stmt),
        expectedTree(sql, rows),
        rebuilt,
      );
      const again = insert(rebuilt);
      assert.deepEqual(
        again.rows,
        rows.map((i) => a.rows?.[i]),
      );
    }
  });
}

test('rebuildInsert keeps everything outside the VALUES rows verbatim', () => {
  const sql =
    "with x as (select 1) insert into t (a, b) values (1, 'p'), (2, 'q') on conflict (a) do update set b = 'z' returning a";
  assert.equal(
    rebuildInsert(insert(sql), [1]),
    "with x as (select 1) insert into t (a, b) values (2, 'q') on conflict (a) do update set b = 'z' returning a",
  );
});

test('rebuildInsertRenumbered renumbers parameters densely and maps them back', () => {
  const a = insert(
    'insert into t (a, b) values ($1, $2), ($3, $4), ($5, $2) on conflict (a) do update set b = $6',
  );
  const r = rebuildInsertRenumbered(a, [2]);
  assert.equal(r.sql, 'insert into t (a, b) values ($1, $2) on conflict (a) do update set b = $3');
  assert.deepEqual(r.paramIndexes, [4, 1, 5]);
  const r2 = rebuildInsertRenumbered(a, [1, 0]);
  assert.equal(
    r2.sql,
    'insert into t (a, b) values ($1, $2), ($3, $4) on conflict (a) do update set b = $5',
  );
  assert.deepEqual(r2.paramIndexes, [2, 3, 0, 1, 5]);
  const s = insert("insert into t (a) values ('$1'), ($2)");
  assert.deepEqual(rebuildInsertRenumbered(s, [1, 0]), {
    sql: "insert into t (a) values ($1), ('$1')",
    paramIndexes: [1],
  });
});

test('rebuildInsert refuses what it cannot split', () => {
  assert.throws(() => rebuildInsert(insert('insert into t select 1'), [0]), {
    name: 'SqlError',
    sqlstate: '0A000',
  });
  assert.throws(() => rebuildInsert(insert('insert into t default values'), [0]), {
    name: 'SqlError',
  });
  assert.throws(() => rebuildInsert(insert('insert into t values (1)'), [1]), RangeError);
  assert.throws(() => rebuildInsert(insert('insert into t values (1)'), []), RangeError);
});
