import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, analyzeAll } from './analyze.js';
import { initSqlParser } from './parser.js';
import { sessionStateOf, sessionStateOfAll } from './session-state.js';

before(() => initSqlParser());

const of = (sql: string) => sessionStateOf(analyze(sql));

describe('sessionStateOf', () => {
  test('temporary objects', () => {
    for (const sql of [
      'create temp table t (x int)',
      'create temporary table t as select 1',
      'create local temp view v as select 1',
      'create temp sequence s',
      'select 1 as x into temp t',
      'create table pg_temp.t (x int)',
    ])
      assert.deepEqual(of(sql).creates, ['temp_table'], sql);
    assert.deepEqual(of('create table t (x int)').creates, []);
    assert.deepEqual(of('discard temp').clears, ['temp_table']);
  });
  test('advisory locks: session forms pin, xact forms only go home', () => {
    assert.deepEqual(of('select pg_advisory_lock(1)'), {
      creates: ['advisory_lock'],
      clears: [],
      declares: undefined,
      closes: undefined,
      homeOnly: true,
    });
    assert.deepEqual(of('select pg_try_advisory_lock_shared(1, 2)').creates, ['advisory_lock']);
    assert.deepEqual(of('select pg_advisory_xact_lock(1)').creates, []);
    assert.equal(of('select pg_advisory_xact_lock(1)').homeOnly, true);
    assert.deepEqual(of('select pg_catalog.pg_advisory_unlock_all()').clears, ['advisory_lock']);
    assert.equal(of('select pg_catalog.pg_advisory_unlock_all()').mayClear, undefined);
    assert.equal(of('select 1').homeOnly, false);
  });
  test('releasing one lock or one channel may leave none: the router asks the node', () => {
    const unlock = of('select pg_advisory_unlock(1)');
    assert.deepEqual([unlock.clears, unlock.mayClear], [[], ['advisory_lock']]);
    assert.deepEqual(of('select pg_advisory_unlock_shared(1, 2)').mayClear, ['advisory_lock']);
    assert.deepEqual(of('unlisten ch').mayClear, ['listen']);
    assert.equal(of('unlisten *').mayClear, undefined);
    const both = sessionStateOfAll(analyzeAll('select pg_advisory_unlock(1); unlisten ch'));
    assert.deepEqual(both.mayClear, ['advisory_lock', 'listen']);
  });
  test('cursors, LISTEN, DISCARD ALL', () => {
    assert.equal(of('declare c cursor with hold for select 1').declares, 'c');
    assert.deepEqual(of('declare c cursor for select 1').creates, []);
    assert.equal(of('close c').closes, 'c');
    assert.equal(of('close all').closes, '*');
    assert.deepEqual(of('listen ch').creates, ['listen']);
    assert.deepEqual(of('unlisten *').clears, ['listen']);
    assert.deepEqual(of('unlisten ch').clears, []);
    assert.equal(of('notify ch').homeOnly, true);
    assert.deepEqual(of('discard all').clears, [
      'temp_table',
      'advisory_lock',
      'hold_cursor',
      'listen',
    ]);
  });
  test("asyncpg's pool reset as one text", () => {
    const c = sessionStateOfAll(
      analyzeAll('SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL'),
    );
    assert.deepEqual(c.clears, ['advisory_lock', 'listen']);
    assert.equal(c.closes, '*');
    assert.equal(c.homeOnly, true);
  });
});
