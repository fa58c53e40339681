// A small builder of crafted histories for the checker's unit tests: client operations with
// explicit times, setup events, and a final-state probe over a two-node catalog (negative hashes
// on n1, the rest on n2). Tests give a row's hash directly, so placement is under their control.
import type { CatalogRecord } from './final-state.js';
import type { EventType, HistoryEvent, ProcessId } from './history.js';
import { TABLES } from './values.js';

const HALF = [
  { lo: '-9223372036854775808', hi: '-1', owner: 'n1' },
  { lo: '0', hi: '9223372036854775807', owner: 'n2' },
];

export const TEST_CATALOG: CatalogRecord = {
  epoch: '7',
  nodes: [
    { name: 'home', host: '10.0.0.1', port: 5432, role: 'home' },
    { name: 'n1', host: '10.0.0.2', port: 5432, role: 'data' },
    { name: 'n2', host: '10.0.0.3', port: 5432, role: 'data' },
  ],
  keyspaces: ['soak_lists', 'soak_counters', 'soak_bank'].map((name) => ({
    name,
    keyType: 'bigint',
    seed: '0',
  })),
  ranges: ['soak_bank', 'soak_counters', 'soak_lists'].flatMap((keyspace) =>
    HALF.map((r) => ({ keyspace, ...r })),
  ),
  tables: Object.values(TABLES).map((t) => ({
    schema: 'public',
    name: t.name,
    kind: 'sharded',
    keyspace: t.keyspace,
    keyColumn: t.key,
  })),
};

/** A row of a table as the probe records it: its values and the hash of its key. */
export interface CraftedRow {
  node?: string;
  h?: number;
  values: Record<string, unknown>;
}

export class CraftedHistory {
  readonly events: HistoryEvent[] = [];
  #t = 0;

  /** Moves the clock to `t` (ms) for the next events. */
  at(tMs: number): this {
    this.#t = tMs * 1e6;
    return this;
  }

  event(process: ProcessId, type: EventType, f: string, value: unknown): this {
    this.events.push({ index: this.events.length, time_ns: this.#t, process, type, f, value });
    return this;
  }

  invoke(p: number, f: string, value: unknown): this {
    return this.event(p, 'invoke', f, value);
  }
  ok(p: number, f: string, value: unknown): this {
    return this.event(p, 'ok', f, value);
  }
  fail(p: number, f: string, value: unknown): this {
    return this.event(p, 'fail', f, value);
  }
  info(p: number, f: string, value: unknown): this {
    return this.event(p, 'info', f, value);
  }

  /** One whole operation: invoke at `fromMs`, completion at `toMs`. */
  op(
    p: number,
    f: string,
    fromMs: number,
    toMs: number,
    status: 'ok' | 'fail' | 'info',
    invoke: unknown,
    done: unknown = invoke,
  ): this {
    this.at(fromMs).invoke(p, f, invoke);
    return this.at(toMs).event(p, status, f, done);
  }

  bankInit(accounts: [number, number][]): this {
    return this.event('setup', 'info', 'bank-init', { balances: accounts });
  }

  /**
   * A complete probe: `rows` per table; a row's node defaults to the owner of its hash, and its
   * hash to its key value (positive: n2).
   */
  probe(
    rows: Partial<Record<keyof typeof TABLES, CraftedRow[]>>,
    opts: {
      probe?: number;
      prepared?: Record<string, string[]>;
      slots?: Record<string, string[]>;
      physicalSlots?: Record<string, string[]>;
      /** The instance read, by node (default: the catalog's address of the node). */
      instances?: Record<string, string>;
    } = {},
  ): this {
    const probe = opts.probe ?? 1;
    this.event('probe', 'info', 'probe-start', { probe });
    this.event('probe', 'info', 'catalog', { probe, catalog: TEST_CATALOG });
    for (const node of TEST_CATALOG.nodes.map((n) => n.name)) {
      for (const [name, list] of Object.entries(rows)) {
        const t = TABLES[name as keyof typeof TABLES];
        const columns = [...new Set((list ?? []).flatMap((r) => Object.keys(r.values)))];
        const mine = (list ?? []).filter((r) => (r.node ?? ownerOfHash(hashOf(r, t.key))) === node);
        if (mine.length === 0) continue;
        this.event('probe', 'info', 'node-rows', {
          probe,
          node,
          table: t.name,
          columns: [...columns, 'h'],
          rows: mine.map((r) => [...columns.map((c) => r.values[c]), String(hashOf(r, t.key))]),
        });
      }
      const n = TEST_CATALOG.nodes.find((x) => x.name === node)!;
      this.event('probe', 'info', 'node-state', {
        probe,
        node,
        instance: opts.instances?.[node] ?? `${n.host}:${n.port}`,
        prepared: opts.prepared?.[node] ?? [],
        slots: opts.slots?.[node] ?? [],
        physicalSlots: opts.physicalSlots?.[node] ?? [],
        publications: [],
        subscriptions: [],
      });
    }
    return this.event('probe', 'info', 'probe-end', { probe });
  }
}

function hashOf(r: CraftedRow, key: string): number {
  return r.h ?? Number(r.values[key]);
}

function ownerOfHash(h: number): string {
  return h < 0 ? 'n1' : 'n2';
}

export const listRow = (
  k: number,
  vals: number[],
  extra: Partial<CraftedRow> = {},
): CraftedRow => ({ values: { k, vals }, ...extra });
