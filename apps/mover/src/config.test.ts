// The mover's configuration: defaults, environment, flags over environment, one sentence for
// each bad value.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ConfigError } from '@tessera/config';
import { parseConfig, USAGE } from './config.js';

test('defaults, environment and flags that win over it', () => {
  const parsed = parseConfig(['--coordinator', '10.0.0.1:7400', '--max-jobs=2'], {
    TESSERA_COORDINATOR: '127.0.0.1:1',
    TESSERA_MOVER_ID: 'm-a',
    TESSERA_CUTOVER_BUDGET_MS: '500',
    TESSERA_NODE_PASSWORD: 'pw',
  });
  assert.equal(parsed.help, false);
  if (parsed.help) return;
  const c = parsed.config;
  assert.equal(c.coordinator, '10.0.0.1:7400');
  assert.equal(c.moverId, 'm-a');
  assert.equal(c.maxJobs, 2);
  assert.equal(c.cutoverBudgetMs, 500);
  assert.equal(c.nodePassword, 'pw');
  assert.equal(c.nodeUser, 'postgres');
  assert.equal(c.leaseMs, 15_000);
  assert.equal(c.catchupBudgetMs, 20);
  assert.equal(c.metricsPort, 7421);
  assert.deepEqual(parseConfig(['--help'], {}), { help: true });
  assert.match(USAGE, /--cutover-budget-ms/);
});

test('bad values are refused with one sentence', () => {
  const bad = (argv: string[], re: RegExp) =>
    assert.throws(
      () => parseConfig(argv, {}),
      (e: unknown) => e instanceof ConfigError && re.test(e.message),
    );
  bad(['--coordinator', 'nowhere'], /not of the form host:port/);
  bad(['--lease-ms', '10'], /--lease-ms must be between 1000 and 600000/);
  bad(['--max-jobs', 'x'], /--max-jobs must be a whole number/);
  bad(['--mover-id', 'a b'], /--mover-id "a b" must be/);
  bad(['--frobnicate'], /unknown argument/);
});
