import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from './config.js';
import { agentArgv } from './launch.js';

test('the command line parses back into the configuration it describes', () => {
  const argv = agentArgv({
    coordinators: ['10.0.0.1:7400', '10.0.0.2:7400'],
    node: 'data1',
    pgUrl: 'postgresql://postgres@127.0.0.1:5432/postgres',
    address: '10.0.0.9:5433',
    dataDir: '/srv/pg/data',
    instanceName: 'data1_10_0_0_9_5433',
    pgLog: '/srv/pg/postgres.log',
    probeIntervalMs: 250,
    extra: ['--probe-failures', '3'],
  });
  const parsed = parseConfig(argv, {});
  assert.equal(parsed.help, false);
  if (parsed.help) return;
  const c = parsed.config;
  assert.deepEqual(c.coordinators, ['10.0.0.1:7400', '10.0.0.2:7400']);
  assert.equal(c.node, 'data1');
  assert.equal(c.address, '10.0.0.9:5433');
  assert.equal(c.dataDir, '/srv/pg/data');
  assert.equal(c.instanceName, 'data1_10_0_0_9_5433');
  assert.equal(c.pgLog, '/srv/pg/postgres.log');
  assert.equal(c.probeIntervalMs, 250);
  assert.equal(c.reportIntervalMs, 1000);
  assert.equal(c.metricsPort, 0);
  assert.equal(c.probeFailures, 3);
});
