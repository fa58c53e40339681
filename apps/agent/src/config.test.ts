import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '@tessera/config';
import { parseConfig, serverPortOf, type AgentConfig } from './config.js';

function config(argv: string[], env: NodeJS.ProcessEnv = {}): AgentConfig {
  const p = parseConfig(argv, env);
  assert.equal(p.help, false);
  if (p.help) throw new Error('unreachable');
  return p.config;
}

const BASE = ['--node', 'd1', '--pg-url', 'postgres://postgres@127.0.0.1:5433/postgres'];

test('defaults: native mode, one coordinator, the address taken from the URL', () => {
  const c = config(BASE);
  assert.deepEqual(c.coordinators, ['127.0.0.1:7400']);
  assert.equal(c.address, '127.0.0.1:5433');
  assert.equal(c.mode, 'native');
  assert.equal(c.reportIntervalMs, 1000);
  assert.equal(c.probeFailures, 2);
});

test('the server is started on the port of --pg-url, not of --address (a proxy in front of it)', () => {
  const behindProxy = config([...BASE, '--address', '10.0.0.7:6543']);
  assert.equal(behindProxy.address, '10.0.0.7:6543');
  assert.equal(serverPortOf(behindProxy), 5433);
  assert.equal(serverPortOf(config(BASE)), 5433);
  assert.equal(
    serverPortOf(config(['--node', 'd1', '--pg-url', 'postgres://postgres@127.0.0.1/postgres'])),
    5432,
  );
});

test('a list of coordinators from the flag or TESSERA_COORDINATOR; flags win', () => {
  assert.deepEqual(config(BASE, { TESSERA_COORDINATOR: 'a:1,b:2' }).coordinators, ['a:1', 'b:2']);
  assert.deepEqual(
    config([...BASE, '--coordinator', 'c:3'], { TESSERA_COORDINATOR: 'a:1,b:2' }).coordinators,
    ['c:3'],
  );
});

test('bad configuration is one sentence', () => {
  const bad: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [['--pg-url', 'postgres://h/x'], {}, /node name is required/],
    [['--node', 'd1'], {}, /instance URL is required/],
    [[...BASE, '--coordinator', 'nope'], {}, /comma-separated list/],
    [[...BASE, '--mode', 'stolon'], {}, /native, patroni or cnpg/],
    [[...BASE, '--mode', 'patroni'], {}, /needs --patroni-url/],
    [[...BASE, '--mode', 'cnpg'], {}, /exactly one of/],
    [[...BASE, '--mode', 'cnpg', '--cnpg-cluster', 'x'], {}, /namespace\/name/],
    [
      [...BASE, '--mode', 'cnpg', '--cnpg-cluster-file', 'f', '--cnpg-address-map', 'a'],
      {},
      /name=host:port/,
    ],
    [[...BASE, '--probe-failures', '0'], {}, /between 1 and 100/],
    [['--node', 'd1', '--pg-url', 'mysql://h/x'], {}, /postgres:\/\//],
  ];
  for (const [argv, env, message] of bad)
    assert.throws(
      () => parseConfig(argv, env),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
    );
});

test('cnpg mode: an address map and template', () => {
  const c = config([
    ...BASE,
    '--mode',
    'cnpg',
    '--cnpg-cluster-file',
    '/tmp/c.json',
    '--cnpg-address-map',
    'pg-1=10.0.0.1:5432, pg-2=10.0.0.2:5432',
  ]);
  assert.equal(c.cnpg?.addresses.get('pg-2'), '10.0.0.2:5432');
  assert.equal(c.cnpg?.addressTemplate, '{instance}:5432');
});

test('--help', () => assert.deepEqual(parseConfig(['--help'], {}), { help: true }));
