// Routing decisions as plain data, no sockets: DESIGN.md section 3 case by case.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, initSqlParser } from '@tessera/sql';
import { route } from './route.js';
import { fixtureCatalog } from './fixture-catalog.js';
import type { ParamSource } from './key-hash.js';
import type { Route } from './route-types.js';

// Keys 1, 3, 5 live on n1 and 2, 4, 8 on n2 (hashint8extended(k, 0) < 0 on n1).
const catalog = fixtureCatalog();
const r = (sql: string, params?: ParamSource): Route => route(analyze(sql), catalog, params);
const text =
  (...values: (string | null)[]): ParamSource =>
  (i) => {
    const v = values[i];
    return v === undefined ? undefined : { value: v === null ? null : Buffer.from(v), format: 0 };
  };
const node = (n: string, label: 'single' | 'home' = 'single', flexible = false): Route => ({
  kind: 'node',
  node: n,
  label,
  flexible,
});
function refused(x: Route, pattern: RegExp): void {
  assert.equal(x.kind, 'refuse', JSON.stringify(x));
  if (x.kind === 'refuse') assert.match(x.message, pattern);
}

before(() => initSqlParser());

describe('route', () => {
  test('a pinned key goes to its owner', () => {
    assert.deepEqual(r('select * from orders where tenant_id = 1'), node('n1'));
    assert.deepEqual(r('select * from orders where tenant_id = 2 and total > 5'), node('n2'));
    assert.deepEqual(r("select * from orders where tenant_id = '4'"), node('n2'));
    assert.deepEqual(r('update orders set total = 1 where tenant_id = 3'), node('n1'));
    assert.deepEqual(r('delete from orders where tenant_id = 8'), node('n2'));
  });

  test('bind parameters, text and binary', () => {
    assert.deepEqual(r('select * from orders where tenant_id = $1', text('1')), node('n1'));
    assert.deepEqual(r('select * from orders where tenant_id = $1', text('2')), node('n2'));
    const bin = Buffer.alloc(8);
    bin.writeBigInt64BE(2n);
    assert.deepEqual(
      r('select * from orders where tenant_id = $1', () => ({ value: bin, format: 1 })),
      node('n2'),
    );
    const int4 = Buffer.alloc(4);
    int4.writeInt32BE(1);
    assert.deepEqual(
      r('select * from orders where tenant_id = $1', () => ({ value: int4, format: 1 })),
      node('n1'),
    );
    assert.deepEqual(r('select * from orders where tenant_id = $1'), { kind: 'params' });
  });

  test('IN and = ANY on one node go there, across nodes scatter to the pinned nodes', () => {
    assert.deepEqual(r('select * from orders where tenant_id in (1, 3, 5)'), node('n1'));
    assert.deepEqual(
      r('select * from orders where tenant_id = any($1)', text('{2,4,8}')),
      node('n2'),
    );
    assert.deepEqual(r('select * from orders where tenant_id in (1, 2)'), {
      kind: 'scatter',
      nodes: ['n1', 'n2'],
    });
    assert.deepEqual(r('select * from orders where tenant_id = any($1)', text('{1,2}')), {
      kind: 'scatter',
      nodes: ['n1', 'n2'],
    });
  });

  test('SELECTs that span nodes scatter; other reads and writes that span nodes are refused', () => {
    assert.equal(r('select * from orders').kind, 'scatter');
    assert.equal(r('select * from orders where total > 5').kind, 'scatter');
    assert.equal(r('explain select count(*) from orders').kind, 'scatter');
    refused(r('create table t2 as select * from orders'), /several nodes/);
  });

  test('UPDATE and DELETE whose rows span nodes run on every owner (two-phase commit)', () => {
    assert.deepEqual(r('update orders set total = 0'), {
      kind: 'multi_write',
      nodes: ['n1', 'n2'],
    });
    assert.deepEqual(r('delete from orders where tenant_id in (1, 2)'), {
      kind: 'multi_write',
      nodes: ['n1', 'n2'],
    });
    assert.deepEqual(r('delete from orders where tenant_id in (1, 3) or total > 5'), {
      kind: 'multi_write',
      nodes: ['n1', 'n2'],
    });
    refused(
      r('delete from orders where total > (select avg(total) from orders)'),
      /subquery or CTE reading sharded table/,
    );
    refused(r("delete from orders where ctid = '(0,1)'"), /ctid/);
    refused(r('update orders set total = 0 where current of c'), /CURRENT OF/);
  });

  test('UPDATE of the key column is refused', () => {
    refused(r('update orders set tenant_id = 5 where tenant_id = 1'), /changes the key column/);
  });

  test('colocated joins stay on one node; joins not on the key are refused', () => {
    assert.deepEqual(
      r('select * from orders o join items i on o.tenant_id = i.tenant_id where o.tenant_id = 2'),
      node('n2'),
    );
    assert.deepEqual(
      r('select * from orders o, items i where i.tenant_id = o.tenant_id and i.tenant_id = 1'),
      node('n1'),
    );
    refused(
      r('select * from orders o join items i on o.id = i.order_id where o.tenant_id = 2'),
      /not joined on their key/,
    );
  });

  test('reference tables join anywhere; a sharded join with a global table is refused', () => {
    assert.deepEqual(
      r('select * from orders o join countries c on c.code = o.country where o.tenant_id = 1'),
      node('n1'),
    );
    assert.deepEqual(r('select * from countries'), node('home', 'home', true));
    refused(
      r('select * from orders o join settings s on s.k = o.k where o.tenant_id = 1'),
      /global table/,
    );
    refused(
      r('select * from orders o join undeclared u on u.k = o.k where o.tenant_id = 1'),
      /global table/,
    );
  });

  test('global, undeclared and table-less statements go home', () => {
    assert.deepEqual(r('select * from settings'), node('home', 'home'));
    assert.deepEqual(r('select * from pg_class'), node('home', 'home'));
    assert.deepEqual(r('select 1'), node('home', 'home', true));
    assert.deepEqual(
      r('select * from settings s join countries c on c.code = s.v'),
      node('home', 'home'),
    );
  });

  test('a keyspace with one owner needs no pin', () => {
    assert.deepEqual(r('select count(*) from logs'), node('n1'));
  });

  test('writes to reference tables reach every node', () => {
    const x = r("insert into countries values ('fr', 'France')");
    assert.equal(x.kind, 'all');
    if (x.kind === 'all') assert.deepEqual(x.nodes, ['home', 'n1', 'n2']);
    refused(r('insert into countries select * from settings'), /reads global table/);
    refused(r('update countries set name = random()::text'), /volatile/);
  });

  test('INSERT by row owner', () => {
    assert.deepEqual(r('insert into orders (tenant_id, total) values (1, 10)'), node('n1'));
    assert.deepEqual(
      r('insert into orders (total, tenant_id) values ($1, $2)', text('5', '2')),
      node('n2'),
    );
    assert.deepEqual(r('insert into orders (tenant_id, total) values (1, 1), (2, 2), (3, 3)'), {
      kind: 'split',
      parts: [
        { node: 'n1', rows: [0, 2] },
        { node: 'n2', rows: [1] },
      ],
    });
    refused(r('insert into orders values (1, 10)'), /column list/);
    refused(r('insert into orders (total) values (10)'), /key column/);
    refused(r('insert into orders (tenant_id) values (default)'), /not a constant/);
    assert.equal(r('insert into orders (tenant_id) select 1').kind, 'insert_select');
  });

  test('a uniqueness on a sharded table must include its key column', () => {
    for (const sql of [
      'create table orders (tenant_id bigint, id bigint primary key)',
      'create table orders (tenant_id bigint, id bigint unique)',
      'create table orders (tenant_id bigint, id bigint, constraint u unique (id))',
      'create table orders (tenant_id bigint, id bigint, exclude using gist (id with =))',
      'create unique index on orders (id)',
      'create unique index on orders (lower(note))',
      'alter table orders add primary key (id)',
      'alter table orders add column code text unique',
      'alter table orders add constraint u unique using index orders_code',
    ])
      refused(r(sql), /must include its key column "tenant_id"/);
    for (const sql of [
      'create table orders (tenant_id bigint, id bigint, primary key (tenant_id, id))',
      'create table orders (tenant_id bigint primary key, id bigint)',
      'create unique index on orders (id, tenant_id)',
      'create unique index on orders (lower(note), tenant_id)',
      'create index on orders (id)',
      'alter table orders add constraint u unique (tenant_id, id)',
      'create table countries (code text primary key)',
    ])
      assert.notEqual(r(sql).kind, 'refuse', sql);
  });

  test('uuid keys', () => {
    const a = r("select * from profiles where id = '2b8e2c6e-6a36-4f4e-9d43-6f0e6ad0a5b1'");
    assert.equal(a.kind, 'node');
  });

  test('DDL: declared tables on every node with a fence, undeclared at home', () => {
    const x = r('create table orders (tenant_id bigint not null, id bigint, total int)');
    assert.equal(x.kind, 'all');
    if (x.kind === 'all') {
      assert.deepEqual(x.nodes, ['home', 'n1', 'n2']);
      assert.match(
        x.after.get('n1')!,
        /ADD CONSTRAINT tessera_owns CHECK \(hashint8extended\(tenant_id, '0'::int8\) BETWEEN '-9223372036854775808'::int8 AND '-1'::int8\) NOT VALID/,
      );
      assert.match(x.after.get('home')!, /CHECK \(false\)/);
    }
    refused(r('create table orders (id bigint)'), /does not define/);
    assert.equal(r('create table countries (code text)').kind, 'all');
    assert.deepEqual(r('create table scratch (x int)'), node('home', 'home'));
    assert.equal(r('drop table orders').kind, 'all');
    assert.equal(r('truncate orders, items').kind, 'all');
    assert.equal(r('alter table items add column note text').kind, 'all');
    assert.equal(r('create index on orders (total)').kind, 'all');
    assert.equal(r('create schema app').kind, 'all');
    assert.equal(r("create type mood as enum ('a')").kind, 'all');
    assert.equal(r('create extension if not exists pgcrypto').kind, 'all');
    assert.equal(r('vacuum orders').kind, 'all');
    assert.equal(r('analyze').kind, 'all');
    assert.deepEqual(r('vacuum settings'), node('home', 'home'));
    refused(r('drop table orders, settings'), /run it once for each kind/);
  });

  test('COPY FROM STDIN by target kind, COPY TO by where the rows are', () => {
    const x = r('copy orders from stdin');
    assert.equal(x.kind, 'copy');
    if (x.kind === 'copy') assert.equal(x.mode, 'split');
    assert.deepEqual(r('copy settings from stdin'), { kind: 'copy', mode: 'node', node: 'home' });
    assert.deepEqual(r('copy countries from stdin with (format csv)'), {
      kind: 'copy',
      mode: 'all',
      nodes: ['home', 'n1', 'n2'],
    });
    assert.deepEqual(r('copy orders to stdout'), { kind: 'scatter', nodes: ['n1', 'n2'] });
    assert.deepEqual(r('copy (select * from orders) to stdout'), {
      kind: 'scatter',
      nodes: ['n1', 'n2'],
    });
    refused(r("copy orders to '/tmp/x'"), /TO STDOUT/);
    refused(r("copy (select * from orders) to program 'cat'"), /TO STDOUT/);
    assert.deepEqual(r('copy (select * from orders where tenant_id = 2) to stdout'), node('n2'));
    assert.equal(r('copy countries to stdout').kind, 'node');
  });

  test('a bad key literal is the error Postgres gives', () => {
    assert.throws(
      () => r("select * from orders where tenant_id = 'abc'"),
      (e: { sqlstate?: string }) => e.sqlstate === '22P02',
    );
  });
});
