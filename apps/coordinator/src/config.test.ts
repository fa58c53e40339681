// Configuration: flags over environment, defaults, and bad configuration as one sentence with
// exit code 2 from the real entry point.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseConfig } from './config.js';
import { ConfigError } from './errors.js';

const URL_ = 'postgresql://postgres@127.0.0.1:5432/catalog';

test('defaults, environment, and flags that win over the environment', () => {
  const parsed = parseConfig(['--listen=127.0.0.1:9000', '--standby-poll-ms', '250'], {
    TESSERA_CATALOG_URL: URL_,
    TESSERA_LISTEN: '127.0.0.1:1',
    TESSERA_METRICS_PORT: '0',
  });
  assert.equal(parsed.help, false);
  if (parsed.help) return;
  assert.deepEqual(parsed.config, {
    catalogUrl: URL_,
    listen: '127.0.0.1:9000',
    metricsPort: 0,
    adminToken: undefined,
    standbyPollMs: 250,
    recoveryGraceMs: 10_000,
    recoveryIntervalMs: 2_000,
    decisionRetentionMs: 3_600_000,
    routerLeaseMs: 10_000,
    routerStaleMs: 15_000,
    logLevel: undefined,
    advertise: undefined,
    leaseMs: 5_000,
    leaseMarginMs: 1_000,
    durability: 'preferred',
    reportFreshMs: 3_000,
  });
  const defaults = parseConfig(['--catalog-url', URL_], {});
  assert.ok(
    !defaults.help &&
      defaults.config.listen === '127.0.0.1:7400' &&
      defaults.config.metricsPort === 7401,
  );
  const fresh = parseConfig(['--catalog-url', URL_, '--report-fresh-ms', '7000'], {});
  assert.ok(!fresh.help && fresh.config.reportFreshMs === 7_000);
  assert.deepEqual(parseConfig(['--help'], {}), { help: true });
});

test('bad configuration is a ConfigError with one sentence', () => {
  const bad: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [[], {}, /catalog database URL is required/],
    [['--catalog-url', 'mysql://x/y'], {}, /must start with postgres:\/\//],
    [['--catalog-url', URL_, '--listen', 'nowhere'], {}, /not of the form host:port/],
    [['--catalog-url', URL_, '--metrics-port', 'x'], {}, /--metrics-port must be a whole number/],
    [['--catalog-url', URL_, '--bogus'], {}, /unknown argument "--bogus"/],
    [['--catalog-url', URL_, '--listen', '0.0.0.0:7400'], {}, /TESSERA_ADMIN_TOKEN must be set/],
    [['--catalog-url'], {}, /needs a value/],
    [['--catalog-url', 'postgresql://u@h:1,h:x/db'], {}, /"h:x" is not a host/],
    [['--catalog-url', URL_, '--durability', 'strict'], {}, /required or preferred/],
    [['--catalog-url', URL_, '--advertise', 'x'], {}, /--advertise "x"/],
    [['--catalog-url', URL_, '--lease-ms', '10'], {}, /between 500 and/],
  ];
  for (const [argv, env, re] of bad) {
    assert.throws(
      () => parseConfig(argv, env),
      (e: unknown) => e instanceof ConfigError && re.test(e.message),
      argv.join(' '),
    );
  }
  const off = parseConfig(['--catalog-url', URL_, '--listen', '0.0.0.0:7400'], {
    TESSERA_ADMIN_TOKEN: 's3cret',
  });
  assert.ok(!off.help && off.config.adminToken === 's3cret');
  const multi = parseConfig(
    [
      '--catalog-url',
      'postgresql://u@127.0.0.1:5432,127.0.0.1:5433/tessera',
      '--durability',
      'required',
    ],
    {},
  );
  assert.ok(!multi.help && multi.config.durability === 'required');
});

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['--conditions=development', '--import', 'tsx', MAIN, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'], ...env },
    timeout: 30_000,
  });

test('the process: a missing catalog URL exits 2 with a sentence; --help exits 0 with usage', () => {
  const missing = run([]);
  assert.equal(missing.status, 2, missing.stderr);
  assert.match(
    missing.stderr,
    /^tessera-coordinator: the catalog database URL is required: pass --catalog-url or set TESSERA_CATALOG_URL\n$/,
  );
  const help = run(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: tessera-coordinator/);
  assert.match(help.stdout, /--catalog-url/);
  const offLoopback = run(['--listen', '0.0.0.0:0'], { TESSERA_CATALOG_URL: URL_ });
  assert.equal(offLoopback.status, 2);
  assert.match(offLoopback.stderr, /TESSERA_ADMIN_TOKEN must be set/);
  assert.doesNotMatch(offLoopback.stderr, /\n\s+at /, 'no stack trace');
});
