// DDL refusal during a move, from catalog data alone.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ddlRefusalForMove, movesByKeyspace } from './index.js';

test('DDL on a moving keyspace is refused with 55006 naming the job; other keyspaces are not', () => {
  const moves = movesByKeyspace({
    moves: [
      {
        keyspace: 'tenants',
        lo: -5n,
        hi: 9n,
        jobId: 42n,
        source: 'data1',
        target: 'data3',
      } as never,
    ],
  });
  const r = ddlRefusalForMove(moves, 'tenants', 'public.orders');
  assert.equal(r?.code, '55006');
  assert.match(
    r!.message,
    /public\.orders cannot be changed while job 42 moves range tenants:-5 from data1 to data3/,
  );
  assert.match(r!.hint, /tessera jobs watch 42/);
  assert.equal(ddlRefusalForMove(moves, 'users', 'public.profiles'), undefined);
});
