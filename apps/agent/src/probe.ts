// Probing the local Postgres: one round trip of three statements on a kept connection (role, LSNs,
// connections, settings; pg_stat_replication; replication slots), plus the disk free under the
// data directory. A probe that fails or takes longer than the timeout drops the connection.
import { statfs } from 'node:fs/promises';
import pg from 'pg';

export interface StandbyRow {
  applicationName: string;
  clientAddr: string;
  state: string;
  syncState: string;
  sentLsn: string;
  flushLsn: string;
  replayLsn: string;
  flushLagBytes: bigint;
  replyAgeMs: bigint;
}

export interface SlotRow {
  name: string;
  type: string;
  active: boolean;
  retainedWalBytes: bigint;
}

export interface InstanceState {
  inRecovery: boolean;
  /** A primary's current LSN ('' on a standby). */
  currentLsn: string;
  receivedLsn: string;
  replayedLsn: string;
  /** A standby: received minus replayed. */
  applyLagBytes: bigint;
  connections: number;
  synchronousStandbyNames: string;
  dataDirectory: string;
  timeline: bigint;
  /** pg_stat_wal_receiver.status on a standby ('' when no WAL receiver runs). */
  walReceiver: string;
  standbys: StandbyRow[];
  slots: SlotRow[];
  diskFreeBytes: bigint;
}

const STATE_SQL = `select pg_is_in_recovery() as in_recovery,
  case when pg_is_in_recovery() then '' else pg_current_wal_lsn()::text end as current_lsn,
  coalesce(pg_last_wal_receive_lsn()::text, '') as received_lsn,
  coalesce(pg_last_wal_replay_lsn()::text, '') as replayed_lsn,
  coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0)::int8::text as apply_lag,
  (select count(*) from pg_stat_activity where backend_type = 'client backend')::int as connections,
  current_setting('synchronous_standby_names') as sync_names,
  current_setting('data_directory') as data_directory,
  case when pg_is_in_recovery()
       then coalesce((select received_tli from pg_stat_wal_receiver), (select timeline_id from pg_control_checkpoint()))
       else ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int
  end::int8::text as timeline,
  coalesce((select status from pg_stat_wal_receiver), '') as wal_receiver`;

const STANDBYS_SQL = `select application_name, coalesce(host(client_addr), '') as client_addr, state,
  sync_state, coalesce(sent_lsn::text, '') as sent, coalesce(flush_lsn::text, '') as flush,
  coalesce(replay_lsn::text, '') as replay,
  coalesce(pg_wal_lsn_diff(case when pg_is_in_recovery() then null else pg_current_wal_lsn() end, flush_lsn), -1)::int8::text as flush_lag,
  coalesce((extract(epoch from (clock_timestamp() - reply_time)) * 1000)::int8, -1)::text as reply_age
  from pg_stat_replication order by application_name`;

const SLOTS_SQL = `select slot_name, slot_type, active,
  coalesce(pg_wal_lsn_diff(case when pg_is_in_recovery() then pg_last_wal_receive_lsn()
                                else pg_current_wal_lsn() end, restart_lsn), 0)::int8::text as retained
  from pg_replication_slots order by slot_name`;

interface StateRow {
  in_recovery: boolean;
  current_lsn: string;
  received_lsn: string;
  replayed_lsn: string;
  apply_lag: string;
  connections: number;
  sync_names: string;
  data_directory: string;
  timeline: string;
  wal_receiver: string;
}
interface StandbyDbRow {
  application_name: string;
  client_addr: string;
  state: string;
  sync_state: string;
  sent: string;
  flush: string;
  replay: string;
  flush_lag: string;
  reply_age: string;
}
interface SlotDbRow {
  slot_name: string;
  slot_type: string;
  active: boolean;
  retained: string;
}

export class Prober {
  private client: pg.Client | undefined;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly dataDir: string | undefined,
  ) {}

  /** One probe; throws (with the reason) when the instance does not answer in time. */
  async probe(): Promise<InstanceState> {
    const timer = new AbortController();
    try {
      return await Promise.race([
        this.run(),
        new Promise<never>((_, reject) => {
          const t = setTimeout(
            () => reject(new Error(`no answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
          timer.signal.addEventListener('abort', () => clearTimeout(t), { once: true });
        }),
      ]);
    } catch (e) {
      this.drop();
      throw e;
    } finally {
      timer.abort();
    }
  }

  private async run(): Promise<InstanceState> {
    const client = this.client ?? (await this.connect());
    const results = (await client.query(
      `${STATE_SQL};\n${STANDBYS_SQL};\n${SLOTS_SQL}`,
    )) as unknown as pg.QueryResult[];
    const [state, standbys, slots] = results;
    const s = state?.rows[0] as StateRow | undefined;
    if (!s) throw new Error('the probe returned no row');
    const dataDirectory = this.dataDir ?? s.data_directory;
    return {
      inRecovery: s.in_recovery,
      currentLsn: s.current_lsn,
      receivedLsn: s.received_lsn,
      replayedLsn: s.replayed_lsn,
      applyLagBytes: BigInt(s.apply_lag),
      connections: s.connections,
      synchronousStandbyNames: s.sync_names,
      dataDirectory,
      timeline: BigInt(s.timeline),
      walReceiver: s.wal_receiver,
      standbys: ((standbys?.rows ?? []) as StandbyDbRow[]).map((r) => ({
        applicationName: r.application_name,
        clientAddr: r.client_addr,
        state: r.state,
        syncState: r.sync_state,
        sentLsn: r.sent,
        flushLsn: r.flush,
        replayLsn: r.replay,
        flushLagBytes: BigInt(r.flush_lag),
        replyAgeMs: BigInt(r.reply_age),
      })),
      slots: ((slots?.rows ?? []) as SlotDbRow[]).map((r) => ({
        name: r.slot_name,
        type: r.slot_type,
        active: r.active,
        retainedWalBytes: BigInt(r.retained),
      })),
      diskFreeBytes: await diskFree(dataDirectory),
    };
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.timeoutMs,
      keepAlive: true,
      application_name: 'tessera-agent',
      statement_timeout: this.timeoutMs,
    });
    client.on('error', () => {
      if (this.client === client) this.client = undefined;
    });
    client.on('end', () => {
      if (this.client === client) this.client = undefined;
    });
    await client.connect();
    this.client = client;
    return client;
  }

  /** A fresh connection for a directive's statements (ALTER SYSTEM, pg_promote), closed after. */
  async withConnection<T>(fn: (c: pg.Client) => Promise<T>, timeoutMs = 60_000): Promise<T> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: Math.min(timeoutMs, 10_000),
      application_name: 'tessera-agent',
    });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  drop(): void {
    const c = this.client;
    this.client = undefined;
    c?.end().catch(() => undefined);
  }
}

async function diskFree(dir: string): Promise<bigint> {
  if (dir === '') return -1n;
  try {
    const s = await statfs(dir, { bigint: true });
    return s.bavail * s.bsize;
  } catch {
    return -1n; // not on this machine (e.g. an agent watching over TCP only)
  }
}
