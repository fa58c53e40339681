import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, boolSetting, intSetting, readFlags, type FlagTable } from './index.js';

type Key = 'port' | 'name' | 'strict';
const FLAGS: FlagTable<Key> = {
  '--port': { env: 'T_PORT', key: 'port' },
  '--name': { env: 'T_NAME', key: 'name' },
  '--strict': { env: 'T_STRICT', key: 'strict', isSwitch: true },
};

function raw(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const r = readFlags(argv, env, FLAGS);
  assert.equal(r.help, false);
  return r.help ? new Map() : r.raw;
}

test('flags win over the environment; empty variables count as unset', () => {
  const r = raw(['--port', '9', '--name=x'], { T_PORT: '1', T_NAME: '', T_STRICT: '1' });
  assert.equal(r.get('port'), '9');
  assert.equal(r.get('name'), 'x');
  assert.equal(boolSetting(r, 'strict', '--strict'), true);
  assert.equal(raw([], { T_NAME: '' }).has('name'), false);
});

test('switches take no value; --help anywhere asks for help', () => {
  assert.equal(raw(['--strict', '--port', '2']).get('strict'), 'true');
  assert.deepEqual(readFlags(['--port', '1', '-h'], {}, FLAGS), { help: true });
});

test('unknown flags, missing values and bad numbers are one sentence each', () => {
  assert.throws(() => readFlags(['--nope'], {}, FLAGS), /unknown argument "--nope"/);
  assert.throws(() => readFlags(['--port'], {}, FLAGS), /flag --port needs a value/);
  const r = raw(['--port', '7x']);
  assert.throws(() => intSetting(r, 'port', '--port', 1, 0, 10), ConfigError);
  assert.throws(
    () => intSetting(raw(['--port', '11']), 'port', '--port', 1, 0, 10),
    /between 0 and 10/,
  );
  assert.equal(intSetting(raw([]), 'port', '--port', 5, 0, 10), 5);
  assert.throws(() => boolSetting(raw(['--strict=maybe']), 'strict', '--strict'), /true or false/);
});
