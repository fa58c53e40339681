// Portals and their result formats at the protocol's edge, byte for byte against one plain
// Postgres: a FETCH from a cursor over a read across nodes whose Bind asks for binary results
// (pgx FETCHes so) gets Postgres's bytes, a Describe of its portal reports those formats, and a
// column the router cannot encode exactly is refused; a named portal lives until its transaction
// ends (bound again before, 42P03) and a simple Query destroys the unnamed statement.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BackendCode,
  SYNC,
  Writer,
  decodeErrorResponse,
  writeBind,
  writeDescribe,
  writeExecute,
  writeParse,
  writeQuery,
} from '@tessera/pg-wire';
import {
  ORDERS_CLUSTER,
  startDifferentialPair,
  type DifferentialPair,
} from './testing/differential.js';
import { RawClient } from './testing/raw-client.js';

let pair: DifferentialPair;

before(async () => {
  pair = await startDifferentialPair(ORDERS_CLUSTER, 'portal-formats-plain', [
    'create table orders (tenant_id bigint not null, id bigint not null, total int, note text)',
    `insert into orders select i, i, (i * 7) % 13, 'n' || (i % 5) from generate_series(1, 200) i`,
  ]);
});

after(async () => {
  await pair?.dispose();
});

/** The frames `send` gets through its `readies`th ReadyForQuery, as one comparable string. */
async function trace(port: number, send: (w: Writer) => void, readies: number): Promise<string> {
  const client = await RawClient.login(port);
  try {
    const w = new Writer();
    send(w);
    client.send(w.flush());
    return (await client.throughReady(readies))
      .map((f) => {
        const code = String.fromCharCode(f.code);
        if (f.code === BackendCode.ErrorResponse) return `E:${decodeErrorResponse(f.body).code}`;
        if (f.code === BackendCode.ReadyForQuery) return `Z:${f.body.toString('latin1')}`;
        if (f.code === BackendCode.DataRow || f.code === BackendCode.RowDescription)
          return `${code}:${f.body.toString('hex')}`;
        return code;
      })
      .join(' ');
  } finally {
    client.socket.destroy();
  }
}

/** The same batch through the router and the plain Postgres: the router's trace, checked equal. */
async function same(send: (w: Writer) => void, readies: number): Promise<string> {
  const router = await trace(pair.cluster.router.port, send, readies);
  assert.equal(router, await trace(pair.plain.port, send, readies));
  return router;
}

test("a FETCH whose Bind asks for binary results (pgx's) gets the bytes Postgres sends", async () => {
  const router = await same((w) => {
    writeQuery(w, 'begin');
    writeQuery(w, 'declare c cursor for select id, total, note from orders order by id');
    // All binary, then one format per column, then text again; each with its RowDescription.
    for (const [i, resultFormats] of [[1], [1, 0, 1], []].entries()) {
      writeParse(w, '', 'fetch 3 from c');
      writeBind(w, { portal: `f${i}`, resultFormats });
      writeDescribe(w, 'P', `f${i}`);
      writeExecute(w, `f${i}`, 0);
      w.bytes(SYNC);
    }
    writeQuery(w, 'rollback');
  }, 6);
  assert.match(router, /D:/, 'rows came back');
});

test('a binary FETCH of a column the router cannot encode exactly is refused (0A000)', async () => {
  const router = await trace(
    pair.cluster.router.port,
    (w) => {
      writeQuery(w, 'begin');
      writeQuery(w, 'declare c cursor for select id, total::float8 as f from orders order by id');
      writeParse(w, '', 'fetch 3 from c');
      writeBind(w, { portal: 'f', resultFormats: [1] });
      writeExecute(w, 'f', 0);
      w.bytes(SYNC);
    },
    3,
  );
  assert.deepEqual(router.match(/E:\w+/g), ['E:0A000']);
});

test('a named portal lives until its transaction ends (42P03 before); a Query drops the unnamed statement', async () => {
  const router = await same((w) => {
    const bindRun = (portal: string): void => {
      writeBind(w, { portal });
      writeExecute(w, portal, 2);
      w.bytes(SYNC);
    };
    // A Query destroys the unnamed statement: Parse it after each.
    const parse = (): void => void writeParse(w, '', 'select id from orders order by id');
    writeQuery(w, 'begin');
    parse();
    bindRun('p'); // in the block: p outlives its Sync
    bindRun('p');
    writeQuery(w, 'rollback');
    parse();
    bindRun('q'); // outside: q ends with its Sync's implicit transaction
    bindRun('q');
    writeQuery(w, 'select 1');
    bindRun('r'); // the unnamed statement is gone since that Query: 26000
  }, 8);
  assert.match(router, /E:42P03.*E:26000/);
});
