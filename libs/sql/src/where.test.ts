// Key pins and join equalities: which conditions pin a key, which never do.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser, analyze } from './index.js';
import type { Analysis, WhereFacts } from './index.js';
import { assertSubset } from './subset.testutil.js';

await initSqlParser();

function where(a: Analysis): WhereFacts {
  switch (a.kind) {
    case 'select':
    case 'update':
    case 'delete':
      return a.where;
    default:
      throw new Error(`no WHERE facts for ${a.kind}`);
  }
}

const c = (text: string | null, extra: Record<string, unknown> = {}) => ({
  kind: 'const',
  text,
  ...extra,
});
const p = (index: number, extra: Record<string, unknown> = {}) => ({
  kind: 'param',
  index,
  isArray: false,
  ...extra,
});

const pinCases: Array<[string, unknown[], Record<string, unknown>?]> = [
  [
    'select * from t where id = 42',
    [{ table: 't', tableIndex: 0, column: 'id', values: [c('42', { literal: 'integer' })] }],
  ],
  ['select * from t where 42 = id', [{ column: 'id', values: [c('42')] }]],
  ['select * from t where id = $1', [{ column: 'id', values: [p(0, { typeName: undefined })] }]],
  ['select * from t where $2 = id', [{ column: 'id', values: [p(1)] }]],
  ['select * from t where id = $1::bigint', [{ values: [p(0, { typeName: 'int8' })] }]],
  ['select * from t where id = cast($1 as int)', [{ values: [p(0, { typeName: 'int4' })] }]],
  ['select * from t where id = -5', [{ values: [c('-5', { literal: 'integer' })] }]],
  ['select * from t where id = - 7', [{ values: [c('-7')] }]],
  ['select * from t where id = -(9)', [{ values: [c('-9')] }]],
  ['select * from t where id = -2.5', [{ values: [c('-2.5', { literal: 'numeric' })] }]],
  [
    'select * from t where id = 9223372036854775807',
    [{ values: [c('9223372036854775807', { literal: 'integer' })] }],
  ],
  [
    'select * from t where id = -9223372036854775808',
    [{ values: [c('-9223372036854775808', { literal: 'integer' })] }],
  ],
  ['select * from t where id = 0', [{ values: [c('0', { literal: 'integer' })] }]],
  [
    "select * from t where name = 'bob'",
    [{ column: 'name', values: [c('bob', { literal: 'string', typeName: undefined })] }],
  ],
  ["select * from t where name = 'it''s'", [{ values: [c("it's")] }]],
  ["select * from t where name = E'a\\nb'", [{ values: [c('a\nb')] }]],
  [
    "select * from t where id = '0b4c5a4e-1f7e-4c55-9d33-7c1e0c8b7f00'::uuid",
    [
      {
        values: [
          c('0b4c5a4e-1f7e-4c55-9d33-7c1e0c8b7f00', { typeName: 'uuid', literal: 'string' }),
        ],
      },
    ],
  ],
  [
    "select * from t where id = cast('17' as bigint)",
    [{ values: [c('17', { typeName: 'int8' })] }],
  ],
  ["select * from t where id = bigint '17'", [{ values: [c('17', { typeName: 'int8' })] }]],
  ["select * from t where id = '5'::text::bigint", [{ values: [c('5', { typeName: 'int8' })] }]],
  ['select * from t where flag = true', [{ values: [c('true', { literal: 'boolean' })] }]],
  ['select * from t where id in (1, 2, 3)', [{ column: 'id', values: [c('1'), c('2'), c('3')] }]],
  ['select * from t where id in ($1, $2)', [{ values: [p(0), p(1)] }]],
  [
    "select * from t where id in ('a', $1::text, -4)",
    [{ values: [c('a'), p(0, { typeName: 'text' }), c('-4')] }],
  ],
  [
    'select * from t where id = any($1)',
    [{ values: [{ kind: 'param', index: 0, isArray: true }] }],
  ],
  [
    'select * from t where id = any($1::bigint[])',
    [{ values: [{ kind: 'param', index: 0, isArray: true, typeName: 'int8[]' }] }],
  ],
  ['select * from t where id = any(array[1, 2])', [{ values: [c('1'), c('2')] }]],
  [
    "select * from t where id = any('{1,2,NULL}'::int8[])",
    [{ values: [c('1', { typeName: 'int8' }), c('2'), c(null)] }],
  ],
  ["select * from t where id = any('{}')", [{ values: [], matchesNothing: true }]],
  [
    'select * from t where id = null',
    [{ values: [c(null, { literal: 'null' })], matchesNothing: true }],
  ],
  ['select * from t where id in (null, null)', [{ matchesNothing: true }]],
  ['select * from t where id in (1, null)', [{ matchesNothing: false }]],
  ['select * from t where id = 1 and id = 2', [{ values: [c('1')] }, { values: [c('2')] }]],
  ['select * from t where id = 1 and name = $1 and x > 3', [{ column: 'id' }, { column: 'name' }]],
  ['select * from t where (id = 1 and (a = 2))', [{ column: 'id' }, { column: 'a' }]],
  ['select * from t x where x.id = 1', [{ table: 'x', tableIndex: 0, column: 'id' }]],
  ['select * from s.t where t.id = 1', [{ table: 't', column: 'id' }]],
  ['select * from s.t where s.t.id = 1', [{ table: 't', column: 'id' }]],
  ['select * from t where "Id" = 1', [{ column: 'Id' }]],
  ['select * from t where ID = 1', [{ column: 'id' }]],
  [
    'select * from a, b where a.k = 1 and b.k = 2',
    [
      { table: 'a', tableIndex: 0 },
      { table: 'b', tableIndex: 1 },
    ],
  ],
  [
    'select * from a, b where k = 1',
    [{ table: undefined, tableIndex: undefined, column: 'k', ambiguous: true }],
  ],
  ['select * from a join b on a.id = b.id where a.id = 7', [{ table: 'a', source: 'where' }]],
  [
    'select * from a join b on b.k = 3 and a.id = b.id',
    [{ table: 'b', column: 'k', source: 'on' }],
  ],
  ['update t set a = 1 where id = 5', [{ table: 't', column: 'id', values: [c('5')] }]],
  [
    'update t set a = 1 where id = $2 and tenant = $1',
    [
      { column: 'id', values: [p(1)] },
      { column: 'tenant', values: [p(0)] },
    ],
  ],
  [
    'update t set a = u.a from u where t.id = 1 and id = 2',
    [
      { table: 't', column: 'id' },
      { ambiguous: true, column: 'id' },
    ],
  ],
  [
    'delete from t where id = any($1)',
    [{ table: 't', values: [{ kind: 'param', isArray: true }] }],
  ],
  ['delete from t using u where t.id = 9 and u.x = t.x', [{ table: 't', column: 'id' }]],
  // Nothing pins:
  ['select * from t where id = 1 or id = 2', [], { hasOr: true }],
  ['select * from t where not id = 1', [], { hasOr: true }],
  ['select * from t where id <> 1', []],
  ['select * from t where id not in (1, 2)', []],
  ['select * from t where id > 1', []],
  ['select * from t where id = 1 + 1', []],
  ['select * from t where id = abs(-1)', []],
  ['select * from t where id::text = $1', []],
  ['select * from t where id in (1, $1 + 1)', []],
  ['select * from t where id in (select id from u where id = 1)', []],
  ['select * from t where exists (select 1 from u where u.id = 1)', []],
  ['select * from (select * from t where id = 1) s', []],
  ['select * from t where id is null', []],
  ['select * from t where id = any(select id from u)', []],
  ['select * from t where id = 1 and (a = 2 or b = 3)', [{ column: 'id' }], { hasOr: true }],
  ['select * from t where x.id = 1', []],
  ['select * from a left join b on b.k = 1', []],
  ['select * from a where k = 1 union select * from b where k = 1', []],
  ['with x as (select * from t where id = 1) select * from x', []],
  ['select * from t where id = 1 or false', [], { hasOr: true }],
];

for (const [sql, pins, extra] of pinCases) {
  test(`pins: ${sql}`, () => {
    const w = where(analyze(sql));
    assertSubset(w.pins, pins);
    if (extra !== undefined) assertSubset(w, extra);
  });
}

const equalityCases: Array<[string, unknown[]]> = [
  [
    'select * from a join b on a.k = b.k',
    [
      {
        left: { table: 'a', tableIndex: 0, column: 'k' },
        right: { table: 'b', tableIndex: 1, column: 'k' },
        via: 'on',
        joinType: 'inner',
      },
    ],
  ],
  [
    'select * from a, b where a.tenant_id = b.tenant_id and a.id = 1',
    [
      {
        left: { table: 'a', column: 'tenant_id' },
        right: { table: 'b', column: 'tenant_id' },
        via: 'where',
        joinType: 'inner',
      },
    ],
  ],
  [
    'select * from a x join b y on y.k = x.k',
    [{ left: { table: 'y', tableIndex: 1 }, right: { table: 'x', tableIndex: 0 } }],
  ],
  [
    'select * from a join b using (k)',
    [
      {
        left: { table: 'a', column: 'k' },
        right: { table: 'b', column: 'k' },
        via: 'using',
        joinType: 'inner',
      },
    ],
  ],
  ['select * from a join b using (k, j)', [{ left: { column: 'k' } }, { left: { column: 'j' } }]],
  [
    'select * from a join b using (k) join c using (k)',
    [
      { left: { table: 'a' }, right: { table: 'b' }, via: 'using' },
      { left: { table: 'a' }, right: { table: 'c' }, via: 'using' },
    ],
  ],
  ['select * from a left join b on a.k = b.k', [{ via: 'on', joinType: 'left' }]],
  ['select * from a right join b on a.k = b.k', [{ joinType: 'right' }]],
  ['select * from a full join b using (k)', [{ via: 'using', joinType: 'full' }]],
  ['select * from a join b on a.k = b.k or a.j = b.j', []],
  ['select * from a join b on a.k = a.j', []],
  ['select * from a, b where k = j', []],
  [
    'select * from a join (select * from b) s on s.k = a.k',
    [{ left: { table: 's', tableIndex: undefined }, right: { table: 'a' } }],
  ],
  ['update t set x = 1 from u where u.k = t.k', [{ left: { table: 'u' }, right: { table: 't' } }]],
  ['delete from t using u where t.k = u.k', [{ left: { table: 't' }, right: { table: 'u' } }]],
];

for (const [sql, eqs] of equalityCases) {
  test(`join equalities: ${sql}`, () => {
    assertSubset(where(analyze(sql)).joinEqualities, eqs);
  });
}

test('natural joins are flagged', () => {
  assert.equal(where(analyze('select * from a natural join b')).hasNaturalJoin, true);
});

test('pins in EXPLAIN and COPY (query) come through the inner analysis', () => {
  const e = analyze('explain select * from t where id = $1');
  assert.equal(e.kind, 'explain');
  if (e.kind === 'explain') assertSubset(where(e.inner).pins, [{ column: 'id' }]);
});
