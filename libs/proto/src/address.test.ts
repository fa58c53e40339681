// Address parsing and the loopback test that decides whether admin calls need a token.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { formatAddress, isLoopback, parseAddress } from './index.js';

test('parseAddress reads host:port and [v6]:port', () => {
  assert.deepEqual(parseAddress('127.0.0.1:50051'), { host: '127.0.0.1', port: 50051 });
  assert.deepEqual(parseAddress('coordinator.internal:0'), {
    host: 'coordinator.internal',
    port: 0,
  });
  assert.deepEqual(parseAddress('[::1]:7000'), { host: '::1', port: 7000 });
  assert.deepEqual(parseAddress(' 0.0.0.0:65535 '), { host: '0.0.0.0', port: 65535 });
});

test('parseAddress refuses what is not host:port, with a sentence naming the input', () => {
  for (const bad of [
    '',
    'localhost',
    ':5000',
    'host:',
    'host:65536',
    'host:-1',
    'host:12ab',
    '::1:5000',
    '[::1]5000',
    '[::1]',
    'a:b:c',
  ]) {
    assert.throws(() => parseAddress(bad), /is not an address of the form host:port/, bad);
  }
});

test('formatAddress brackets IPv6 hosts', () => {
  assert.equal(formatAddress('::1', 5), '[::1]:5');
  assert.equal(formatAddress('10.0.0.1', 5), '10.0.0.1:5');
  assert.equal(formatAddress('db', 5), 'db:5');
});

test('isLoopback knows 127.0.0.0/8, ::1 in its spellings, and localhost', () => {
  for (const h of [
    '127.0.0.1',
    '127.255.3.4',
    'localhost',
    'LOCALHOST',
    'api.localhost',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
  ]) {
    assert.equal(isLoopback(h), true, h);
  }
  for (const h of [
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '128.0.0.1',
    '1127.0.0.1',
    '127.0.0',
    'example.com',
    'localhost.example.com',
    '::2',
    '::ffff:10.0.0.1',
    '',
  ]) {
    assert.equal(isLoopback(h), false, h);
  }
});
