// Finding the command in argv and the usage errors, without a coordinator.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { freePort } from '@tessera/pgctl';
import { main } from './cli.js';
import { captureIo } from './io.js';

async function run(...argv: string[]) {
  const io = captureIo({}, '/nonexistent');
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

test('flags may come before the command words', async () => {
  const port = await freePort();
  const r = await run('--coordinator', `127.0.0.1:${port}`, 'nodes', '--json', 'list');
  assert.equal(r.code, 1);
  assert.match(r.err, new RegExp(`cannot reach the coordinator at 127\\.0\\.0\\.1:${port}`));
});

test('the coordinator address comes from TESSERA_COORDINATOR when no flag is given', async () => {
  const port = await freePort();
  const io = captureIo({ TESSERA_COORDINATOR: `127.0.0.1:${port}` }, '/nonexistent');
  assert.equal(await main(['status'], io), 1);
  assert.match(io.stderr, new RegExp(`127\\.0\\.0\\.1:${port}`));
});

test('a group without a subcommand lists its subcommands, exit 2; with --help, exit 0', async () => {
  const r = await run('range');
  assert.equal(r.code, 2);
  assert.match(r.err, /^tessera: range needs a subcommand\n/);
  assert.match(r.err, /tessera range split KEYSPACE:LO \[--at HASH\]/);
  const h = await run('range', '--help');
  assert.equal(h.code, 0);
  assert.match(h.out, /^Commands:$/m);
});

test('unknown subcommand, extra and missing arguments are usage errors', async () => {
  const unknown = await run('nodes', 'frob');
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /^tessera: unknown command "nodes frob"\n/);
  const extra = await run('status', 'now');
  assert.equal(extra.code, 2);
  assert.match(extra.err, /^tessera: unexpected argument "now"\nUsage: tessera status \[--json\]/);
  const missing = await run('nodes', 'add', 'x');
  assert.equal(missing.code, 2);
  assert.match(missing.err, /Usage: tessera nodes add NAME HOST:PORT/);
  const badAddr = await run('nodes', 'add', 'x', 'nowhere');
  assert.equal(badAddr.code, 2);
  assert.match(badAddr.err, /not of the form HOST:PORT/);
});

test('help: `tessera help CMD` and bare `tessera`; the hidden supervisor is not listed', async () => {
  const bare = await run();
  assert.equal(bare.code, 0);
  assert.match(bare.out, /^Commands:$/m);
  assert.doesNotMatch(bare.out, /supervise/);
  const h = await run('help', 'keyspace', 'create');
  assert.equal(h.code, 0);
  assert.match(h.out, /^  tessera keyspace create NAME --type TYPE/m);
});
