// The CloudNativePG view from recorded Cluster documents (cnpg-testdata/, see its README: they are
// written by hand in the shape the operator publishes, since Kubernetes cannot run here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cnpgView } from './cnpg.js';
import type { CnpgSource } from './config.js';

const source: CnpgSource = {
  addressTemplate: '{instance}.{namespace}.svc:5432',
  addresses: new Map([['pg-2', '10.0.0.2:5432']]),
};
const read = (f: string): unknown =>
  JSON.parse(readFileSync(new URL(`./cnpg-testdata/${f}`, import.meta.url), 'utf8'));

test('healthy: the current primary, from the template', () => {
  const v = cnpgView(source, read('1-healthy.json'));
  assert.equal(v.leader, 'pg-1.tessera.svc:5432');
  assert.equal(v.changing, false);
  assert.equal(v.timeline, 1n);
});

test('failing over: no leader while the target differs from the current primary', () => {
  const v = cnpgView(source, read('2-failing-over.json'));
  assert.equal(v.leader, '');
  assert.equal(v.changing, true);
  assert.match(v.phase, /Failing over \(target pg-2\)/);
});

test('promoted: the new primary, from the explicit map', () => {
  const v = cnpgView(source, read('3-promoted.json'));
  assert.equal(v.leader, '10.0.0.2:5432');
  assert.equal(v.changing, false);
  assert.equal(v.timeline, 2n);
});

test('a document without status, or not an object, is a view with no leader', () => {
  assert.equal(cnpgView(source, {}).leader, '');
  assert.equal(cnpgView(source, null).changing, true);
});
