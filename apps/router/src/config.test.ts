// Configuration: defaults, flags over environment, one sentence for anything wrong; and the
// binary exits 2 on a bad flag.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseConfig } from './config.js';
import { ConfigError } from './errors.js';

describe('parseConfig', () => {
  test('defaults', () => {
    const p = parseConfig([], {});
    assert.equal(p.help, false);
    if (p.help) return;
    assert.equal(p.config.listen, '127.0.0.1:6432');
    assert.equal(p.config.coordinator, '127.0.0.1:7400');
    assert.equal(p.config.poolSize, 20);
    assert.equal(p.config.poolMode, 'transaction');
    assert.equal(p.config.maxClients, 1000);
    assert.equal(p.config.auth, 'trust');
    assert.equal(p.config.acquireTimeoutMs, 30_000);
    assert.equal(p.config.heldAcquireTimeoutMs, 5_000);
  });

  test('the held acquire wait, by flag or environment', () => {
    const byEnv = parseConfig([], { TESSERA_HELD_ACQUIRE_TIMEOUT_MS: '750' });
    assert.ok(!byEnv.help && byEnv.config.heldAcquireTimeoutMs === 750);
    const byFlag = parseConfig(['--held-acquire-timeout-ms', '250'], {});
    assert.ok(!byFlag.help && byFlag.config.heldAcquireTimeoutMs === 250);
    assert.throws(() => parseConfig(['--held-acquire-timeout-ms', '0'], {}), /between 1/);
  });

  test("the commit's decision window, by flag or environment", () => {
    const d = parseConfig([], {});
    assert.ok(!d.help && d.config.decideTimeoutMs === 5_000);
    const byEnv = parseConfig([], { TESSERA_DECIDE_TIMEOUT_MS: '20000' });
    assert.ok(!byEnv.help && byEnv.config.decideTimeoutMs === 20_000);
    const byFlag = parseConfig(['--decide-timeout-ms', '1500'], {});
    assert.ok(!byFlag.help && byFlag.config.decideTimeoutMs === 1_500);
    assert.throws(() => parseConfig(['--decide-timeout-ms', '50'], {}), /between 100/);
  });

  test('flags win over the environment', () => {
    const p = parseConfig(['--pool-size', '7', '--pool-mode=session'], {
      TESSERA_POOL_SIZE: '3',
      TESSERA_MAX_CLIENTS: '9',
      TESSERA_NODE_PASSWORD: 'pw',
    });
    assert.ok(!p.help);
    if (p.help) return;
    assert.equal(p.config.poolSize, 7);
    assert.equal(p.config.poolMode, 'session');
    assert.equal(p.config.maxClients, 9);
    assert.equal(p.config.nodePassword, 'pw');
  });

  test('bad values are one sentence', () => {
    assert.throws(() => parseConfig(['--pool-mode', 'statement'], {}), ConfigError);
    assert.throws(() => parseConfig(['--listen', 'nowhere'], {}), /host:port/);
    assert.throws(() => parseConfig(['--pool-size', '0'], {}), /between 1/);
    assert.throws(() => parseConfig(['--bogus'], {}), /unknown argument/);
    assert.throws(() => parseConfig(['--auth', 'md5'], {}), /trust or scram/);
    assert.deepEqual(parseConfig(['--help'], {}), { help: true });
  });

  test('authentication, TLS and login-timeout flags', () => {
    const p = parseConfig(
      ['--auth', 'scram', '--tls-cert', 'c.pem', '--tls-key=k.pem', '--tls-required'],
      { TESSERA_AUTH_USER: 'svc', TESSERA_AUTH_PASSWORD: 'pw', TESSERA_LOGIN_TIMEOUT_MS: '2500' },
    );
    assert.ok(!p.help);
    if (p.help) return;
    assert.equal(p.config.auth, 'scram');
    assert.equal(p.config.authUser, 'svc');
    assert.equal(p.config.authPassword, 'pw');
    assert.equal(p.config.tlsCert, 'c.pem');
    assert.equal(p.config.tlsKey, 'k.pem');
    assert.equal(p.config.tlsRequired, true);
    assert.equal(p.config.loginTimeoutMs, 2500);
    const d = parseConfig([], {});
    assert.ok(!d.help && d.config.loginTimeoutMs === 10_000 && d.config.authUser === 'postgres');
    assert.throws(() => parseConfig(['--tls-cert', 'c.pem'], {}), /go together/);
    assert.throws(() => parseConfig(['--tls-required'], {}), /needs a certificate/);
  });

  test('the binary exits 2 with one line on bad configuration', () => {
    const r = spawnSync(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', 'src/main.ts', '--pool-mode', 'x'],
      { encoding: 'utf8', cwd: new URL('..', import.meta.url).pathname },
    );
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /^tessera-router: --pool-mode must be transaction or session, not "x"\n$/,
    );
  });
});
