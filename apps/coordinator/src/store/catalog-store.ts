// The catalog's only write path. Every change is one transaction that first bumps the epoch
// (the meta row lock this takes also queues concurrent changes one behind another, so none is
// lost), then applies its edits, validates every keyspace it touched, reads the resulting
// snapshot, and commits. A refused change rolls back whole: epoch and ranges stay as they were.
import { validateRanges } from '@tessera/keyspace';
import type { Catalog } from '@tessera/proto';
import type pg from 'pg';
import { unavailable } from '../errors.js';
import { transaction } from './db.js';
import { readCatalog, readMeta, readRanges } from './snapshot.js';

/** The advisory lock the active coordinator holds (two-int4 form: classid 'tess', objid 1). */
export const LEADER_LOCK = [0x74657373, 1] as const;

/** What a change function sees: its transaction, the epoch it will create, and a way to ask for validation. */
export interface ChangeTx {
  readonly client: pg.PoolClient;
  readonly epoch: bigint;
  readonly clusterUid: string;
  /** Validate this keyspace's ranges before commit (cover every int8 exactly once). */
  touch(keyspace: string): void;
}

export interface Committed<T> {
  epoch: bigint;
  /** The whole catalog as of this epoch. */
  catalog: Catalog;
  value: T;
}

export interface CatalogStoreOptions {
  /**
   * Backend pid of the connection holding the leader lock. When given, a change commits only if
   * that backend still holds the lock: a coordinator that lost leadership cannot write (fencing).
   */
  leaderPid?: () => number | undefined;
}

export class CatalogStore {
  constructor(
    readonly pool: pg.Pool,
    private readonly opts: CatalogStoreOptions = {},
  ) {}

  /**
   * A consistent snapshot of the whole catalog. It first share-locks the meta row, which waits
   * for a change in flight (even one of a coordinator that just lost leadership) and keeps new
   * ones out until the snapshot is read.
   */
  read(): Promise<Catalog> {
    return transaction(this.pool, async (client) => {
      await client.query('select 1 from tessera.meta for share');
      return readCatalog(client);
    });
  }

  async epoch(): Promise<bigint> {
    return (await transaction(this.pool, readMeta, { readOnly: true })).epoch;
  }

  /** Runs `fn` as one catalog change; resolves with the new epoch and snapshot once committed. */
  change<T>(fn: (tx: ChangeTx) => Promise<T>): Promise<Committed<T>> {
    return transaction(this.pool, async (client) => {
      const { epoch, clusterUid } = await this.bumpEpoch(client);
      const touched = new Set<string>();
      const value = await fn({ client, epoch, clusterUid, touch: (k) => touched.add(k) });
      for (const keyspace of touched) {
        const exists = await client.query('select 1 from tessera.keyspace where name = $1', [
          keyspace,
        ]);
        // A dropped keyspace has no ranges left to check (they went with it).
        if (exists.rowCount === 0) continue;
        validateRanges(keyspace, await readRanges(client, keyspace));
      }
      const catalog = await readCatalog(client);
      return { epoch, catalog, value };
    });
  }

  private async bumpEpoch(client: pg.ClientBase): Promise<{ epoch: bigint; clusterUid: string }> {
    const pid = this.opts.leaderPid ? this.opts.leaderPid() : null;
    if (this.opts.leaderPid && pid === undefined) {
      throw unavailable(
        'this coordinator is not the active one; retry against the active coordinator',
      );
    }
    const { rows } = await client.query<{ epoch: string; cluster_uid: string }>(
      `update tessera.meta set epoch = epoch + 1
        where $1::int is null
           or exists (select 1 from pg_locks
                       where locktype = 'advisory' and granted and pid = $1::int
                         and classid = $2::int::oid and objid = $3::int::oid and objsubid = 2)
       returning epoch::text, cluster_uid`,
      [pid, LEADER_LOCK[0], LEADER_LOCK[1]],
    );
    const row = rows[0];
    if (!row)
      throw unavailable('this coordinator no longer holds the leader lock; it is stepping down');
    return { epoch: BigInt(row.epoch), clusterUid: row.cluster_uid };
  }
}
