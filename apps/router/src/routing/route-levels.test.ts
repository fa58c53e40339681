// Routing of statements with query levels (CTEs, subqueries, set-operation branches) over sharded
// tables: each level pinned by its own tables and WHERE (route-dml.ts routeNested).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, initSqlParser } from '@tessera/sql';
import { route } from './route.js';
import { fixtureCatalog } from './fixture-catalog.js';
import type { ParamSource } from './key-hash.js';
import type { Route } from './route-types.js';

// Keys 1, 3, 5 live on n1 and 2, 4, 8 on n2 (fixture-catalog.ts).
const catalog = fixtureCatalog();
const r = (sql: string, params?: ParamSource): Route => route(analyze(sql), catalog, params);
const node = (n: string): Route => ({ kind: 'node', node: n, label: 'single', flexible: false });
const scatter = (...nodes: string[]): Route => ({ kind: 'scatter', nodes });
function refused(x: Route, pattern: RegExp): void {
  assert.equal(x.kind, 'refuse', JSON.stringify(x));
  if (x.kind === 'refuse') assert.match(x.message, pattern);
}

before(() => initSqlParser());

describe('route: query levels', () => {
  test('a CTE or subquery pinned to the same node as the outer query goes to that node', () => {
    assert.deepEqual(
      r('with x as (select * from orders where tenant_id = 2) select * from x'),
      node('n2'),
    );
    assert.deepEqual(
      r(
        'with x as (select * from orders where tenant_id = 1) select x.id, c.name from x join countries c on c.code = x.country',
      ),
      node('n1'),
    );
    assert.deepEqual(
      r(
        'select * from orders where tenant_id = 3 and total > (select avg(total) from items where tenant_id = 5)',
      ),
      node('n1'),
    );
    assert.deepEqual(
      r('select count(*) from (select distinct total from orders where tenant_id = 4) s'),
      node('n2'),
    );
    // A CTE name used in an inner level is not a table of that level.
    assert.deepEqual(
      r(
        'with x as (select * from orders where tenant_id = 8) select * from items where tenant_id = 2 and id in (select id from x)',
      ),
      node('n2'),
    );
  });

  test('levels on different nodes, or unpinned, scatter a SELECT to all their nodes', () => {
    assert.deepEqual(
      r(
        'with x as (select * from orders where tenant_id = 1) select * from x union all select * from items where tenant_id = 2',
      ),
      scatter('n1', 'n2'),
    );
    assert.deepEqual(
      r('select count(*) from (select distinct total from orders) s'),
      scatter('n1', 'n2'),
    );
    assert.deepEqual(
      r('with x as (select tenant_id from orders) select count(*) from x'),
      scatter('n1', 'n2'),
    );
  });

  test('a set operation over keyspaces scatters to the owners of every branch', () => {
    assert.deepEqual(
      r('select tenant_id from orders union select id from logs'),
      scatter('n1', 'n2'),
    );
    assert.deepEqual(
      r('select id::text from profiles union all select tenant_id::text from orders'),
      scatter('n1', 'n2'),
    );
    // The one-owner keyspace alone: its node.
    assert.deepEqual(
      r('select id from logs union all select id from logs where id = 5'),
      node('n1'),
    );
    assert.deepEqual(
      r('select tenant_id from orders where tenant_id = 3 union select id from logs'),
      node('n1'),
    );
  });

  test('a data-modifying CTE may touch every owner of its table', () => {
    assert.deepEqual(
      r(
        'with d as (delete from orders returning tenant_id) select * from items where tenant_id = 1',
      ),
      scatter('n1', 'n2'),
    );
    assert.deepEqual(
      r('with d as (delete from logs returning id) select * from logs where id = 3'),
      node('n1'),
    );
  });

  test('a level not joined on its key is refused as before', () => {
    refused(
      r('select * from (select * from orders o join items i on o.id = i.order_id) s'),
      /not joined on their key/,
    );
  });

  test('parameters of an inner level are needed before routing', () => {
    assert.deepEqual(r('with x as (select * from orders where tenant_id = $1) select * from x'), {
      kind: 'params',
    });
    const one: ParamSource = () => ({ value: Buffer.from('4'), format: 0 });
    assert.deepEqual(
      r('with x as (select * from orders where tenant_id = $1) select * from x', one),
      node('n2'),
    );
  });

  test('UPDATE and DELETE with a subquery: one node when every level is there, else refused', () => {
    assert.deepEqual(
      r(
        'update orders set total = 0 where tenant_id = 2 and id in (select order_id from items where tenant_id = 2)',
      ),
      node('n2'),
    );
    refused(
      r(
        'update orders set total = 0 where tenant_id = 2 and id in (select order_id from items where tenant_id = 1)',
      ),
      /subquery or CTE reading sharded table/,
    );
    refused(
      r('delete from orders where total > (select avg(total) from orders)'),
      /subquery or CTE reading sharded table/,
    );
    refused(
      r('delete from orders where tenant_id = 1 and total > (select avg(total) from orders)'),
      /subquery or CTE reading sharded table/,
    );
  });
});
