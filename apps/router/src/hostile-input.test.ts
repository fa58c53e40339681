// Bad input: random bytes, truncated frames, an absurd frame length, an unknown message type, a
// Bind for an unknown statement, an oversized startup packet, more clients than allowed. Each
// gets an ErrorResponse or a closed connection, and the router keeps serving everyone else.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  BackendCode,
  Writer,
  decodeErrorResponse,
  writeBind,
  writeQuery,
  writeStartupMessage,
  SYNC,
} from '@tessera/pg-wire';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { RawClient } from './testing/raw-client.js';

let c: TestCluster;
let healthy: pg.Client;

before(async () => {
  c = await startTestCluster({ router: { maxClients: 20, loginTimeoutMs: 1000 } });
  healthy = new pg.Client({ connectionString: c.url() });
  await healthy.connect();
});
after(async () => {
  await healthy?.end().catch(() => undefined);
  await c?.dispose();
});

async function stillServing(): Promise<void> {
  assert.equal((await healthy.query('select 1 as x')).rows[0].x, 1);
  const fresh = new pg.Client({ connectionString: c.url() });
  await fresh.connect();
  assert.equal((await fresh.query('select 2 as x')).rows[0].x, 2);
  await fresh.end();
}

describe('hostile input', () => {
  test('random bytes instead of a startup packet', async () => {
    for (let i = 0; i < 20; i++) {
      const raw = await RawClient.open(c.router.port);
      raw.send(randomBytes(1 + ((i * 37) % 300)));
      assert.ok(await raw.closedWithin(2000), 'closed');
      raw.end();
    }
    await stillServing();
  });

  test('random bytes after login', async () => {
    for (let i = 0; i < 10; i++) {
      const raw = await RawClient.login(c.router.port);
      raw.send(randomBytes(64));
      raw.send(randomBytes(64));
      // Either an ErrorResponse and a close, or (bytes that look like a long frame) still waiting.
      await raw.closedWithin(300);
      raw.end();
    }
    await stillServing();
  });

  test('truncated frames, then the client goes away', async () => {
    const raw = await RawClient.login(c.router.port);
    const q = writeQuery(new Writer(), 'select 1').flush();
    raw.send(q.subarray(0, 7));
    await new Promise((r) => setTimeout(r, 50));
    raw.end();
    const half = await RawClient.open(c.router.port);
    half.send(writeStartupMessage(new Writer(), { user: 'postgres' }).flush().subarray(0, 10));
    half.end();
    await stillServing();
  });

  test('a frame length of 2^31-1 gets 08P01 and a close', async () => {
    const raw = await RawClient.login(c.router.port);
    const b = Buffer.alloc(5);
    b[0] = 0x51;
    b.writeInt32BE(2 ** 31 - 1, 1);
    raw.send(b);
    const frames = await raw.until((f) => f.code === BackendCode.ErrorResponse);
    assert.equal(decodeErrorResponse(frames[frames.length - 1]!.body).code, '08P01');
    assert.ok(await raw.closedWithin(2000));
    await stillServing();
  });

  test('an unknown message type gets 08P01 and a close', async () => {
    const raw = await RawClient.login(c.router.port);
    raw.send(Buffer.from([0x7a, 0, 0, 0, 4]));
    const frames = await raw.until((f) => f.code === BackendCode.ErrorResponse);
    assert.equal(decodeErrorResponse(frames[frames.length - 1]!.body).code, '08P01');
    assert.ok(await raw.closedWithin(2000));
    await stillServing();
  });

  test('a Bind for an unknown statement gets 26000 and the connection stays usable', async () => {
    const raw = await RawClient.login(c.router.port);
    raw.send(Buffer.concat([writeBind(new Writer(), { statement: 'nope' }).flush(), SYNC]));
    const frames = await raw.until((f) => f.code === BackendCode.ReadyForQuery);
    assert.deepEqual(
      frames
        .filter((f) => f.code === BackendCode.ErrorResponse)
        .map((f) => decodeErrorResponse(f.body).code),
      ['26000'],
    );
    raw.send(writeQuery(new Writer(), 'select 1').flush());
    const ok = await raw.until((f) => f.code === BackendCode.ReadyForQuery);
    assert.ok(
      ok.some((f) => f.code === BackendCode.DataRow),
      'a row',
    );
    raw.end();
  });

  test('a startup packet over 10,000 bytes closes the connection', async () => {
    const raw = await RawClient.open(c.router.port);
    raw.send(
      writeStartupMessage(new Writer(), { user: 'postgres', options: 'x'.repeat(11_000) }).flush(),
    );
    assert.ok(await raw.closedWithin(2000));
    await stillServing();
  });

  test('the client beyond --max-clients gets 53300', async () => {
    const clients: pg.Client[] = [];
    try {
      let refused: { code?: string } | undefined;
      for (let i = 0; i < 25 && refused === undefined; i++) {
        const cl = new pg.Client({ connectionString: c.url() });
        try {
          await cl.connect();
          clients.push(cl);
        } catch (e) {
          refused = e as { code?: string };
        }
      }
      assert.equal(refused?.code, '53300');
      assert.ok(
        clients.length >= 15 && clients.length <= 19,
        `accepted ${clients.length} of 20 slots`,
      );
    } finally {
      await Promise.all(clients.map((cl) => cl.end()));
    }
    await stillServing();
  });
});
