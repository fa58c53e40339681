// Cancels forwarded to a real node: Postgres ignores a CancelRequest that reaches a backend while
// it reads its next message, so the router sends it again while the same statement still runs; and
// a backend with a cancel on its way is given to no one else until the node has delivered it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BackendCode, Writer, decodeErrorResponse, writeQuery } from '@tessera/pg-wire';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { Backend, type BackendSink } from './backend.js';
import { Pool } from './pool.js';

let pg: PgServer;
const target = (): ConstructorParameters<typeof Pool>[0] => ({
  node: 'n1',
  host: pg.host,
  port: pg.port,
  database: 'postgres',
  user: 'postgres',
});

before(async () => {
  pg = await startPostgres();
});
after(async () => {
  await pg?.dispose();
});

/** A statement's sink: settles with the SQLSTATE of its error ('' when none) at ReadyForQuery. */
function statement(owner: object): { sink: BackendSink; done: Promise<string> } {
  let code = '';
  let settle!: (code: string) => void;
  const done = new Promise<string>((resolve) => (settle = resolve));
  const sink: BackendSink = {
    owner,
    onReadable: (b) => {
      for (let f = b.nextFrame(); f; f = b.nextFrame()) {
        if (f.code === BackendCode.ErrorResponse) code = decodeErrorResponse(f.body).code;
        if (f.code === BackendCode.ReadyForQuery) {
          b.detach(sink);
          settle(code);
        }
      }
    },
    onClosed: (_b, e) => settle(`closed: ${e.message}`),
  };
  return { sink, done };
}

async function delivered(b: Backend): Promise<void> {
  await new Promise<void>((resolve) => b.whenCancelsDelivered(resolve));
}

test('a cancel the node ignored between messages is sent again while the statement runs', async () => {
  const b = await Backend.connect(target(), 5000);
  try {
    const owner = {};
    const { sink, done } = statement(owner);
    // The statement is the head but its Query has not reached the node: the first cancel finds
    // the backend reading its next message, as it does between a pipelined statement's turn
    // coming and its Execute, and Postgres drops it.
    b.attach(sink);
    b.cancelFor(owner);
    await delivered(b);
    const started = Date.now();
    b.write(writeQuery(new Writer(64), 'select pg_sleep(20)').flush());
    assert.equal(await done, '57014', 'the sleep was cancelled by a cancel sent again');
    assert.ok(Date.now() - started < 10_000, `cancelled after ${Date.now() - started} ms`);
  } finally {
    b.close();
  }
});

test('a cancel is not sent again to the next statement, even of the same client', async () => {
  const b = await Backend.connect(target(), 5000);
  try {
    const owner = {};
    const first = statement(owner);
    b.attach(first.sink);
    b.write(writeQuery(new Writer(64), 'select 1').flush());
    // Sent while the first statement is the head; it is over before the cancel arrives (or not).
    b.cancelFor(owner);
    assert.match(await first.done, /^(|57014)$/);
    await delivered(b);
    const next = statement(owner);
    b.attach(next.sink);
    b.write(writeQuery(new Writer(64), 'select pg_sleep(0.5)').flush());
    assert.equal(await next.done, '', 'the next statement ran to its end');
  } finally {
    b.close();
  }
});

test('a backend with a cancel on its way goes back to its pool only once it is delivered', async () => {
  const pool = new Pool(target(), 1, 5000);
  try {
    const b = await pool.acquire(5000);
    void b.sendCancel();
    assert.equal(b.cancelsInFlight, 1);
    pool.release(b);
    assert.equal(pool.idleCount, 0, 'given back while its cancel was on the way');
    await delivered(b);
    assert.equal(pool.idleCount, 1);
    assert.equal(pool.tryAcquire(), b);
  } finally {
    pool.close();
  }
});
