// The command line parser and the argument formats: int64 bounds, KEYSPACE:LO, table names.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { parseArgs, parseHostPort, parseInt64, parseRangeRef, parseTableName } from './args.js';
import { UsageError } from './errors.js';

const specs = {
  at: { type: 'string', description: '' },
  json: { type: 'boolean', description: '' },
  help: { type: 'boolean', short: 'h', description: '' },
} as const;

test('flags take values that start with a dash', () => {
  const a = parseArgs(['ks:-9223372036854775808', '--at', '-4611686018427387904', '--json'], specs);
  assert.deepEqual(a.positionals, ['ks:-9223372036854775808']);
  assert.equal(a.flags.get('at'), '-4611686018427387904');
  assert.equal(a.flags.get('json'), true);
});

test('--flag=value, short flags, and -- ending the flags', () => {
  const a = parseArgs(['--at=-5', '-h', '--', '--json'], specs);
  assert.equal(a.flags.get('at'), '-5');
  assert.equal(a.flags.get('help'), true);
  assert.deepEqual(a.positionals, ['--json']);
});

test('unknown flags, missing values and values on boolean flags are usage errors', () => {
  assert.throws(
    () => parseArgs(['--nope'], specs),
    (e: unknown) => e instanceof UsageError && /unknown option --nope/.test(e.message),
  );
  assert.throws(() => parseArgs(['-x'], specs), UsageError);
  assert.throws(() => parseArgs(['--at'], specs), /needs a value/);
  assert.throws(() => parseArgs(['--json=yes'], specs), /takes no value/);
});

test('negative numbers are positionals, not flags', () => {
  assert.deepEqual(parseArgs(['-12'], specs).positionals, ['-12']);
});

test('int64 parsing accepts exactly the signed 64-bit decimals', () => {
  assert.equal(parseInt64('-9223372036854775808', 'x'), -(2n ** 63n));
  assert.equal(parseInt64('9223372036854775807', 'x'), 2n ** 63n - 1n);
  assert.equal(parseInt64('0', 'x'), 0n);
  for (const bad of [
    '9223372036854775808',
    '-9223372036854775809',
    '',
    '+1',
    '0x10',
    '1e3',
    '1.5',
    ' 1',
    '--1',
    '1_000',
  ]) {
    assert.throws(() => parseInt64(bad, 'x'), UsageError, bad);
  }
});

test('KEYSPACE:LO', () => {
  assert.deepEqual(parseRangeRef('tenants:-9223372036854775808'), {
    keyspace: 'tenants',
    lo: -(2n ** 63n),
  });
  assert.deepEqual(parseRangeRef('events:42'), { keyspace: 'events', lo: 42n });
});

test('malformed KEYSPACE:LO says what is expected', () => {
  for (const bad of [
    'tenants',
    ':5',
    'tenants:',
    'tenants:abc',
    'a:b:1',
    'tenants:99999999999999999999',
  ]) {
    assert.throws(() => parseRangeRef(bad), UsageError, bad);
  }
  assert.throws(() => parseRangeRef('tenants'), /write KEYSPACE:LO/);
});

test('table names default to schema public', () => {
  assert.deepEqual(parseTableName('orders'), { schema: 'public', name: 'orders' });
  assert.deepEqual(parseTableName('sales.orders'), { schema: 'sales', name: 'orders' });
  for (const bad of ['', '.x', 'x.', 'a.b.c'])
    assert.throws(() => parseTableName(bad), UsageError, bad);
});

test('host:port', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:5432', 'a'), { host: '127.0.0.1', port: 5432 });
  assert.deepEqual(parseHostPort('[::1]:5432', 'a'), { host: '::1', port: 5432 });
  for (const bad of ['host', ':5432', 'host:0', 'host:70000', 'host:x'])
    assert.throws(() => parseHostPort(bad, 'a'), UsageError, bad);
});
