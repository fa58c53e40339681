// Carrying out cleanup records (the coordinator's job_cleanup): each kind of object has one
// idempotent remover, walked newest first, each record marked done once its object is gone.
// Which records run depends on how the job ends: `always` ones every time, `on_failure` ones when
// it is undone, `on_success` ones when it succeeded. Rows are never deleted from a node the
// catalog says owns them, whatever a record says.
import type { Catalog, CleanupRecord } from '@tessera/proto';
import type { JobRuntime } from '../job/runtime.js';
import { writeFence } from '../pg/fences.js';
import { deleteMarkerRow } from '../pg/marker.js';
import { dropPublication, dropSlots, dropSubscription } from '../pg/replication.js';
import { deleteRange } from '../pg/rows.js';
import { qualified, type NodeAddr } from '../nodes/sessions.js';
import { keyspaceInfo, nodeAddr, ownedRanges, type ShardedTable } from './catalog-view.js';

export type Policy = 'always' | 'on_failure' | 'on_success';

interface RowsDetail {
  keyspace: string;
  lo: string;
  hi: string;
  tables: ShardedTable[];
}

interface FenceDetail {
  keyspace: string;
  tables: ShardedTable[];
}

interface SlotDetail {
  subOid?: number;
}

function detail<T>(r: CleanupRecord): T {
  return (r.detailJson === '' ? {} : JSON.parse(r.detailJson)) as T;
}

/** The record's node: from the catalog, or the address the record carries (a node not in it yet). */
function recordNode(catalog: Catalog, r: CleanupRecord): NodeAddr {
  if (catalog.nodes.some((n) => n.name === r.node)) return nodeAddr(catalog, r.node);
  const d = detail<{ host?: string; port?: number }>(r);
  if (d.host === undefined || d.port === undefined)
    throw new Error(
      `cleanup record ${r.kind} ${r.name} names node ${r.node}, which the catalog does not have`,
    );
  return { name: r.node, host: d.host, port: d.port };
}

async function removeOne(rt: JobRuntime, r: CleanupRecord): Promise<void> {
  const catalog = await rt.catalog();
  const node = recordNode(catalog, r);
  switch (r.kind) {
    case 'subscription': {
      const how = await rt.nodes.with(node, r.database, (c) => dropSubscription(c, r.name));
      rt.log.info(
        { node: r.node, database: r.database, subscription: r.name, how },
        'subscription removed',
      );
      return;
    }
    case 'slot': {
      const d = detail<SlotDetail>(r);
      const dropped = await rt.nodes.with(node, r.database, (c) => dropSlots(c, r.name, d.subOid));
      if (dropped.length > 0)
        rt.log.info({ node: r.node, slots: dropped }, 'replication slots dropped');
      return;
    }
    case 'publication':
      await rt.nodes.with(node, r.database, (c) => dropPublication(c, r.name));
      return;
    case 'marker':
      await rt.nodes.with(node, r.database, (c) => deleteMarkerRow(c, BigInt(r.name)));
      return;
    case 'fence': {
      // Back to what the catalog says the node owns.
      const d = detail<FenceDetail>(r);
      const ks = keyspaceInfo(catalog, d.keyspace);
      await rt.nodes.with(node, r.database, (c) =>
        writeFence(c, ks, ownedRanges(catalog, d.keyspace, r.node), d.tables),
      );
      return;
    }
    case 'rows': {
      const d = detail<RowsDetail>(r);
      const lo = BigInt(d.lo);
      const hi = BigInt(d.hi);
      const owner = catalog.ranges.find(
        (x) => x.keyspace === d.keyspace && x.lo <= lo && hi <= x.hi,
      )?.owner;
      if (owner === r.node) {
        rt.log.warn(
          { node: r.node, keyspace: d.keyspace, lo: d.lo },
          'not deleting rows of a range from the node that owns it',
        );
        return;
      }
      const ks = keyspaceInfo(catalog, d.keyspace);
      let deleted = 0;
      await rt.nodes.with(node, r.database, async (c) => {
        for (const t of d.tables)
          deleted += await deleteRange(c, t, ks, lo, hi, {
            batchRows: rt.config.deleteBatchRows,
            rowsPerSec: rt.config.deleteRowsPerSec,
            onBatch: (n) => {
              rt.metrics.rowsDeleted.inc({ keyspace: d.keyspace }, n);
              rt.checkpoint();
            },
          });
        for (const t of d.tables)
          await c.query(`vacuum ${qualified(t.schema, t.name)}`).catch(() => undefined);
      });
      rt.log.info(
        { node: r.node, database: r.database, rows: deleted, keyspace: d.keyspace, lo: d.lo },
        'range rows deleted',
      );
      return;
    }
    case 'table':
      return;
    default:
      throw new Error(`unknown cleanup record kind ${r.kind}`);
  }
}

/** Removes every not-yet-done record whose policy is in `policies`, newest first. */
export async function runCleanup(
  rt: JobRuntime,
  policies: readonly Policy[],
  filter: (r: CleanupRecord) => boolean = () => true,
): Promise<number> {
  const records = (await rt.cleanupRecords()).filter(
    (r) => !r.done && policies.includes(r.policy as Policy) && filter(r),
  );
  for (const r of records.reverse()) {
    await removeOne(rt, r);
    await rt.cleanupDone(r);
  }
  return records.length;
}

/** Marks records done without acting on them (an on_failure record once the job succeeded). */
export async function dismissCleanup(
  rt: JobRuntime,
  filter: (r: CleanupRecord) => boolean,
): Promise<void> {
  for (const r of await rt.cleanupRecords()) if (!r.done && filter(r)) await rt.cleanupDone(r);
}
