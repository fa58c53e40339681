// queryLevels: each CTE body and subquery with its own FROM tables and key pins.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser } from './index.js';
import { queryLevels } from './levels.js';

await initSqlParser();

test('a CTE pinned to one key shows its pin at its own level', () => {
  const levels = queryLevels(
    'with x as (select id, name from orders where tenant_id = 64) select * from x join plans p on p.id = x.id',
  );
  const pinned = levels.find((l) => l.tables.some((t) => t.name === 'orders' && t.scope === 'top'));
  assert.ok(pinned !== undefined);
  assert.deepEqual(
    pinned.where.pins.map((p) => [
      p.column,
      p.values.map((v) => (v.kind === 'const' ? v.text : v.index)),
    ]),
    [['tenant_id', ['64']]],
  );
  const outer = levels[0];
  assert.ok(outer?.tables.some((t) => t.name === 'plans' && t.scope === 'top'));
});

test('subqueries in WHERE and FROM, branches of UNION, and INSERT ... SELECT are levels', () => {
  const levels = queryLevels(
    'select * from a where a.k = 1 and a.x in (select x from b where b.k = 1) union all select * from (select * from c where k = $1) s',
  );
  const byTable = (name: string) =>
    levels.find((l) => l.tables.some((t) => t.name === name && t.scope === 'top'));
  assert.equal(byTable('a')?.where.pins[0]?.column, 'k');
  assert.equal(byTable('b')?.where.pins[0]?.column, 'k');
  const c = byTable('c')?.where.pins[0]?.values[0];
  assert.deepEqual(c, { kind: 'param', index: 0, isArray: false, typeName: undefined });
  const ins = queryLevels('insert into t (k, v) select k, v from u where k = 5');
  assert.equal(ins.length, 1);
  assert.equal(ins[0]?.where.pins[0]?.column, 'k');
  assert.ok(Object.isFrozen(ins));
});
