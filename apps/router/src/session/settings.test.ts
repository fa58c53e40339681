// The session's search_path as the router resolves names by it, asked several times per
// statement and answered from a memo: every change (SET, SET LOCAL, RESET, RESET ALL, DISCARD
// ALL, a transaction's end or rollback) is seen at the next ask.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, initSqlParser, type SetAnalysis } from '@tessera/sql';
import { SessionSettings } from './settings.js';

before(async () => {
  await initSqlParser();
});

function set(sql: string): SetAnalysis {
  const a = analyze(sql);
  assert.equal(a.kind, 'set');
  return a as SetAnalysis;
}

test('search_path: SET, SET LOCAL, RESET and RESET ALL are each seen at the next ask', () => {
  const st = new SessionSettings();
  st.fromStartup(new Map([['search_path', 'app, public']]));
  assert.deepEqual(st.searchPath(false), ['app', 'public']);
  assert.deepEqual(st.searchPath(false), ['app', 'public'], 'asked again: the same');
  st.apply(set('SET search_path TO other'));
  assert.deepEqual(st.searchPath(false), ['other']);
  // SET LOCAL: for the open transaction only; gone at the first ask outside one.
  st.apply(set('SET LOCAL search_path TO tx'));
  assert.deepEqual(st.searchPath(true), ['tx']);
  assert.deepEqual(st.searchPath(true), ['tx']);
  assert.deepEqual(st.searchPath(false), ['other']);
  assert.deepEqual(st.searchPath(true), ['other'], 'not back after the transaction ended');
  st.apply(set('RESET search_path'));
  assert.deepEqual(st.searchPath(false), ['app', 'public'], 'RESET: the startup value');
  st.apply(set('SET search_path TO other'));
  st.apply(set('RESET ALL'));
  assert.deepEqual(st.searchPath(false), ['app', 'public']);
  st.apply(set('SET search_path TO other'));
  st.resetAll();
  assert.deepEqual(st.searchPath(false), ['app', 'public'], 'DISCARD ALL');
});

test('search_path: a rolled-back transaction restores the path it began with', () => {
  const st = new SessionSettings();
  assert.equal(st.searchPath(false), undefined, 'no path set: the login default');
  const atBegin = st.save();
  st.apply(set('SET search_path TO inside'));
  assert.deepEqual(st.searchPath(true), ['inside']);
  st.restore(atBegin);
  assert.equal(st.searchPath(false), undefined);
  st.apply(set('SET search_path TO kept'));
  const saved = st.save();
  st.apply(set('SET search_path TO later'));
  assert.deepEqual(st.searchPath(true), ['later']);
  st.restore(saved);
  assert.deepEqual(st.searchPath(true), ['kept']);
  st.apply(set('SET search_path TO DEFAULT'));
  assert.equal(st.searchPath(true), undefined, 'DEFAULT: the login default again');
});
