// What counts as a write for the commit decision: conservative, a plain read only when clearly one.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, initSqlParser } from '@tessera/sql';
import { isWrite } from './writes.js';

before(() => initSqlParser());

test('plain reads are not writes; anything that may change data is', () => {
  for (const sql of [
    'select * from orders where tenant_id = 1',
    'select count(*), max(total), now() from orders',
    'show search_path',
    'explain select 1',
    'fetch 10 from c',
    'declare c cursor for select * from orders',
    'set local statement_timeout = 5',
    'savepoint a',
  ])
    assert.equal(isWrite(analyze(sql)), false, sql);
  for (const sql of [
    'insert into orders (tenant_id) values (1)',
    'update orders set total = 1',
    'delete from orders',
    'select * from orders for update',
    'with d as (delete from orders returning *) select * from d',
    'select nextval($$s$$)',
    'select my_function(1)',
    'explain analyze delete from orders',
    'copy orders from stdin',
    'create table t (a int)',
    'do $$ begin end $$',
    'lock orders',
  ])
    assert.equal(isWrite(analyze(sql)), true, sql);
  assert.equal(isWrite(undefined), true);
});
