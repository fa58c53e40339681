// The failover suite's write load: per node, writers that insert unique ids in autocommit, either
// straight to the node's primary as the catalog names it or through a router into a table whose
// rows live on that node. Every acknowledged id, and when its statement was issued and answered,
// is kept for the per-kill numbers and the final readback.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { NODES, type NodeName } from './failover-cluster.js';
import type { Ack, WriteError } from './failover-outcome.js';

export interface WritersOptions {
  perNode: number;
  /** host:port a writer of `node` connects to now; undefined while there is none to name. */
  server(node: NodeName): string | undefined;
  /** The table a writer of `node` inserts into (its `id bigint` column). */
  table(node: NodeName): string;
  /** The client's statement timeout: longer than the router's hold timeout, so it decides. */
  queryTimeoutMs: number;
}

export class Writers {
  readonly acked = new Map<NodeName, Set<number>>(NODES.map((n) => [n, new Set()]));
  readonly acks: Ack[] = [];
  readonly errors: WriteError[] = [];
  private stopped = false;
  private next = 1;
  private readonly running: Promise<void>[] = [];

  constructor(private readonly opts: WritersOptions) {
    for (const n of NODES) for (let i = 0; i < opts.perNode; i++) this.running.push(this.loop(n));
  }

  private async loop(node: NodeName): Promise<void> {
    let client: pg.Client | undefined;
    let server = '';
    const insert = `insert into ${this.opts.table(node)} (id) values ($1)`;
    while (!this.stopped) {
      try {
        if (!client) {
          const s = this.opts.server(node);
          if (s === undefined) throw new Error('no server to connect to yet');
          server = s;
          client = new pg.Client({
            connectionString: `postgresql://postgres@${server}/postgres`,
            connectionTimeoutMillis: 2_000,
            query_timeout: this.opts.queryTimeoutMs,
          });
          client.on('error', () => undefined);
          await client.connect();
        }
        const id = this.next++;
        const issuedAt = Date.now();
        await client.query(insert, [id]);
        this.acked.get(node)!.add(id);
        this.acks.push({ issuedAt, at: Date.now(), node, server });
      } catch (e) {
        this.errors.push({
          at: Date.now(),
          node,
          message: e instanceof Error ? e.message : String(e),
        });
        await client?.end().catch(() => undefined);
        client = undefined;
        await sleep(50);
      }
    }
    await client?.end().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }
}
