// Routers known to the catalog: their address, last heartbeat and the epoch they route by. These
// writes are not catalog changes (no new epoch): routers come and go without reshaping anything.
import { create, RouterInfoSchema, type RouterInfo } from '@tessera/proto';
import type pg from 'pg';
import { invalidArgument, notFound } from '../errors.js';
import { transaction, withClient } from './db.js';

export class RouterStore {
  constructor(private readonly pool: pg.Pool) {}

  async register(id: string, address: string): Promise<void> {
    if (id === '') throw invalidArgument('a router needs an id');
    await withClient(this.pool, (c) =>
      c.query(
        `insert into tessera.router (id, address, last_heartbeat) values ($1, $2, clock_timestamp())
         on conflict (id) do update set address = excluded.address, last_heartbeat = excluded.last_heartbeat,
           deregistered = false`,
        [id, address],
      ),
    );
  }

  /** Heartbeat: records the epoch the router now routes by. */
  async ack(id: string, epoch: bigint): Promise<void> {
    const res = await withClient(this.pool, (c) =>
      c.query(
        `update tessera.router set acked_epoch = greatest(acked_epoch, $2), last_heartbeat = clock_timestamp() where id = $1`,
        [id, epoch.toString()],
      ),
    );
    if (res.rowCount === 0)
      throw notFound(`router ${id} is not registered; call RegisterRouter first`);
  }

  list(): Promise<RouterInfo[]> {
    return transaction(
      this.pool,
      async (c) => {
        const { rows } = await c.query<{ id: string; address: string; hb: string; acked: string }>(
          `select id, address, (extract(epoch from last_heartbeat) * 1000)::int8::text as hb, acked_epoch::text as acked
             from tessera.router order by id collate "C"`,
        );
        return rows.map((r) =>
          create(RouterInfoSchema, {
            id: r.id,
            address: r.address,
            lastHeartbeatMs: BigInt(r.hb),
            ackedEpoch: BigInt(r.acked),
          }),
        );
      },
      { readOnly: true },
    );
  }
}
