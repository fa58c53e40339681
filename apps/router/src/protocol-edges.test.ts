// Two edges of the statement path. The snapshot a Bind was admitted with travels to its Execute:
// a portal bound under epoch E runs as E said even if the catalog changed before its Execute.
// And the error edge converts any error that carries a SQLSTATE: a COPY row the router itself
// refuses reaches the client as Postgres would send it (22P04 and Postgres's message). (On the
// wire: postgres.js waits forever for a COPY that fails after its CopyDone, with Postgres too.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import postgres from 'postgres';
import {
  BackendCode,
  Writer,
  decodeErrorResponse,
  writeBind,
  writeCopyData,
  writeCopyDone,
  writeExecute,
  writeFlush,
  writeParse,
  writeQuery,
  writeSync,
} from '@tessera/pg-wire';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { RawClient } from './testing/raw-client.js';

let c: TestCluster;
let plain: PgServer;

before(async () => {
  [c, plain] = await Promise.all([startTestCluster(), startPostgres({ name: 'edges-plain' })]);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

/** Runs `change` at the coordinator and waits until the router routes by the epoch it made. */
async function newEpoch(change: () => Promise<unknown>): Promise<void> {
  const before = c.router.catalog()!.epoch;
  await change();
  const deadline = Date.now() + 20_000;
  while (c.router.catalog()!.epoch <= before) {
    if (Date.now() > deadline) throw new Error('the router never saw the new epoch');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the snapshot travels from Bind to Execute', () => {
  test('a portal bound under epoch E runs as E routed it, though E+1 changed the table', async () => {
    // Under E the table is a reference table: its CREATE TABLE runs on every node.
    await newEpoch(() => c.admin.referenceTable({ schema: 'public', name: 'bind_snap' }));
    const raw = await RawClient.login(c.router.port);
    try {
      const w = new Writer(256);
      writeParse(w, '', 'create table bind_snap (x int)');
      writeBind(w, {});
      writeFlush(w);
      raw.send(w.flush());
      await raw.until((f) => f.code === BackendCode.BindComplete);
      // Under E+1 it is undeclared, so global: routed now, it would be created on home only.
      await newEpoch(() => c.admin.dropTable({ schema: 'public', name: 'bind_snap' }));
      const x = new Writer(64);
      writeExecute(x);
      writeSync(x);
      raw.send(x.flush());
      const frames = await raw.until((f) => f.code === BackendCode.ReadyForQuery);
      assert.deepEqual(raw.errors(), []);
      assert.ok(frames.some((f) => f.code === BackendCode.CommandComplete));
    } finally {
      raw.end();
    }
    for (const [name, server] of c.byName) {
      const found = await server.query("select 1 from pg_class where relname = 'bind_snap'");
      assert.equal(found.length, 1, `bind_snap on ${name}, as epoch E said`);
    }
  });
});

describe('the error edge', () => {
  const ddl = 'create table copy_bad (id int, total int, tenant_id bigint not null)';

  before(async () => {
    await newEpoch(() =>
      c.admin.distributeTable({
        schema: 'public',
        name: 'copy_bad',
        keyColumn: 'tenant_id',
        keyspace: 'tenants',
      }),
    );
    const sql = postgres(c.url(), { max: 1, onnotice: () => undefined });
    await sql.unsafe(ddl);
    await sql.end();
    await plain.query(ddl);
  });

  /** COPY FROM STDIN of `rows` on the wire: the error it ends with (code and message). */
  async function copyError(port: number, rows: string): Promise<{ code: string; message: string }> {
    const raw = await RawClient.login(port);
    try {
      raw.send(
        writeQuery(new Writer(128), 'copy copy_bad (id, total, tenant_id) from stdin').flush(),
      );
      await raw.until((f) => f.code === BackendCode.CopyInResponse);
      const w = new Writer(256);
      writeCopyData(w, Buffer.from(rows));
      writeCopyDone(w);
      raw.send(w.flush());
      const frames = await raw.until((f) => f.code === BackendCode.ReadyForQuery);
      const error = frames.find((f) => f.code === BackendCode.ErrorResponse);
      if (error === undefined) return { code: 'none', message: 'the COPY succeeded' };
      const fields = decodeErrorResponse(error.body);
      return { code: fields.code, message: fields.message };
    } finally {
      raw.end();
    }
  }

  test('a row the router cannot split is 22P04 with Postgres’s message', async () => {
    const rows = '1\t2\t5\n3\t4\n';
    const viaRouter = await copyError(c.router.port, rows);
    const viaPlain = await copyError(plain.port, rows);
    assert.equal(viaPlain.code, '22P04');
    assert.deepEqual(viaRouter, viaPlain);
    assert.match(viaRouter.message, /missing data for column "tenant_id"/);
  });

  test('a row a node refuses passes on the node’s own error', async () => {
    const rows = '1\t2\t5\nabc\t4\t6\n';
    const viaRouter = await copyError(c.router.port, rows);
    const viaPlain = await copyError(plain.port, rows);
    assert.equal(viaPlain.code, '22P02');
    assert.deepEqual(viaRouter, viaPlain);
  });
});
