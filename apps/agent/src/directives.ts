// Carrying out the coordinator's directives on the local instance. Each resolves when done and
// throws a sentence when it cannot be done; the agent reports the outcome by the directive's id.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { baseBackup, conninfo, rewind, type PrimaryConn } from '@tessera/pgctl';
import type { AgentDirective } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { ServerControl } from './control.js';
import type { Prober } from './probe.js';

export type Action = 'lease' | 'promote' | 'fence' | 'start' | 'rejoin' | 'follow' | 'set_sync';

export function parseAction(text: string): Action | undefined {
  switch (text) {
    case 'lease':
    case 'promote':
    case 'fence':
    case 'start':
    case 'rejoin':
    case 'follow':
    case 'set_sync':
      return text;
    default:
      return undefined;
  }
}

export interface DirectiveContext {
  prober: Prober;
  /** Undefined without --data-dir: the server cannot be stopped, started or rejoined. */
  control: ServerControl | undefined;
  binDir?: string | undefined;
  log: Logger;
  /** The agent follows an HA engine (patroni, cnpg): it never promotes, fences or rejoins. */
  following: string | undefined;
  /**
   * Who the agent logs in as on its node's primary (to rewind, copy and stream from it): its own
   * instance's credentials, since a node's instances share their roles.
   */
  primaryLogin?: { user: string; password?: string | undefined } | undefined;
}

/** A SQL string literal. */
export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function needControl(ctx: DirectiveContext, what: string): ServerControl {
  if (!ctx.control) throw new Error(`cannot ${what}: the agent was started without --data-dir`);
  return ctx.control;
}

/** Carries out one directive other than a lease (leases are the agent's own bookkeeping). */
export async function carryOut(
  action: Exclude<Action, 'lease'>,
  d: AgentDirective,
  ctx: DirectiveContext,
): Promise<void> {
  if (ctx.following !== undefined)
    throw new Error(`this agent follows ${ctx.following}, which decides; it does not ${action}`);
  switch (action) {
    case 'promote':
      return promote(d, ctx);
    case 'fence':
      return fence(d, ctx);
    case 'start':
      return start(ctx);
    case 'rejoin':
      return rejoin(d, ctx);
    case 'follow':
      return follow(d, ctx);
    case 'set_sync':
      return setSync(d.synchronousStandbyNames, ctx);
    default: {
      const never: never = action;
      throw new Error(`unknown action ${String(never)}`);
    }
  }
}

async function inRecovery(c: pg.Client): Promise<boolean> {
  const { rows } = await c.query<{ r: boolean }>('select pg_is_in_recovery() as r');
  return rows[0]?.r === true;
}

async function promote(d: AgentDirective, ctx: DirectiveContext): Promise<void> {
  if (ctx.control?.isFenced())
    throw new Error('refusing to promote a fenced former primary; rejoin it first');
  await ctx.prober.withConnection(async (c) => {
    if (!(await inRecovery(c))) return; // promoted already (a retried directive)
    // Before promotion: from the first commit on, the new primary waits for what the coordinator
    // says (or commits alone), whatever its copied configuration held.
    await c.query(
      `alter system set synchronous_standby_names = ${literal(d.synchronousStandbyNames)}`,
    );
    await c.query('select pg_reload_conf()');
    const { rows } = await c.query<{ ok: boolean }>('select pg_promote(true, 60) as ok');
    if (rows[0]?.ok !== true) throw new Error('pg_promote did not finish within 60 s');
  });
  ctx.log.warn({ reason: d.reason }, 'promoted this standby to primary');
}

async function fence(d: AgentDirective, ctx: DirectiveContext): Promise<void> {
  const control = needControl(ctx, 'fence');
  // The marker first: from now on nothing of ours starts this server again until rejoin.
  control.fence(d.reason || 'fenced by the coordinator');
  await control.kill();
  ctx.prober.drop();
  ctx.log.warn({ reason: d.reason }, 'fenced: the server is stopped and kept stopped');
}

async function start(ctx: DirectiveContext): Promise<void> {
  const control = needControl(ctx, 'start the server');
  if (control.isFenced()) throw new Error('refusing to start a fenced former primary');
  const pid = await control.start();
  ctx.log.info({ pid }, 'server started');
}

function primaryOf(d: AgentDirective, ctx: DirectiveContext): PrimaryConn {
  if (d.primaryHost === '' || d.primaryPort <= 0 || d.applicationName === '')
    throw new Error('the directive names no primary (host, port) and application_name');
  const login = ctx.primaryLogin;
  return {
    host: d.primaryHost,
    port: d.primaryPort,
    applicationName: d.applicationName,
    ...(login ? { user: login.user } : {}),
    ...(login?.password !== undefined ? { password: login.password } : {}),
  };
}

/**
 * A former primary becomes a standby of the current primary: pg_rewind -R, or when rewinding is
 * impossible a fresh base backup; then it starts and must stream on the primary's timeline within
 * a minute (a standby still on the old timeline never catches up: it gets a fresh base backup).
 */
async function rejoin(d: AgentDirective, ctx: DirectiveContext): Promise<void> {
  const control = needControl(ctx, 'rejoin');
  const primary = primaryOf(d, ctx);
  await control.kill();
  ctx.prober.drop();
  // pg_rewind (15) takes the source's timeline from its control file, which a promoted server
  // updates only at its first checkpoint after promotion (a spread one, seconds later): rewinding
  // before it says "no rewind required", and the standby then replays the old timeline's
  // divergent WAL and can never follow the new one. A CHECKPOINT first makes the timeline current.
  const timeline = await checkpointSource(primary);
  let how = 'pg_rewind';
  try {
    const said = await rewind(primary, control.dataDir, binDirOpt(ctx));
    ctx.log.info({ timeline: timeline.toString(), pgRewind: said }, 'pg_rewind finished');
  } catch (e) {
    ctx.log.warn(
      { err: e instanceof Error ? e.message : String(e) },
      'pg_rewind failed; taking a fresh base backup instead',
    );
    how = 'base backup';
    await baseBackup(primary, control.dataDir, binDirOpt(ctx));
  }
  control.unfence();
  await control.start();
  try {
    await waitStreaming(ctx, timeline, 60_000);
  } catch (e) {
    if (how !== 'pg_rewind') throw e;
    ctx.log.warn(
      { err: e instanceof Error ? e.message : String(e) },
      'the rewound standby does not follow the primary; taking a fresh base backup instead',
    );
    how = 'base backup';
    await control.kill();
    ctx.prober.drop();
    await baseBackup(primary, control.dataDir, binDirOpt(ctx));
    await control.start();
    await waitStreaming(ctx, timeline, 60_000);
  }
  ctx.log.warn({ primary: `${primary.host}:${primary.port}`, how }, 'rejoined as a standby');
}

/** CHECKPOINT on the primary a standby is about to copy from; resolves with its timeline. */
async function checkpointSource(primary: PrimaryConn): Promise<bigint> {
  const c = new pg.Client({
    host: primary.host,
    port: primary.port,
    user: primary.user ?? 'postgres',
    database: 'postgres',
    application_name: 'tessera-agent',
    connectionTimeoutMillis: 10_000,
    query_timeout: 120_000,
    ...(primary.password !== undefined ? { password: primary.password } : {}),
  });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('checkpoint');
    const { rows } = await c.query<{ tli: string }>(
      'select timeline_id::int8::text as tli from pg_control_checkpoint()',
    );
    return BigInt(rows[0]?.tli ?? '0');
  } catch (e) {
    throw new Error(
      `cannot checkpoint the primary ${primary.host}:${primary.port} before rewinding onto it: ${e instanceof Error ? e.message : String(e)}`,
    );
  } finally {
    await c.end().catch(() => undefined);
  }
}

function binDirOpt(ctx: DirectiveContext): { binDir?: string } {
  return ctx.binDir !== undefined ? { binDir: ctx.binDir } : {};
}

/** Until the standby streams WAL of the primary's timeline `timeline` (or a later one). */
async function waitStreaming(
  ctx: DirectiveContext,
  timeline: bigint,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const s = await ctx.prober.probe();
      if (s.inRecovery && s.walReceiver === 'streaming' && s.timeline >= timeline) return;
      last = `in recovery ${s.inRecovery}, WAL receiver "${s.walReceiver}" on timeline ${s.timeline} (the primary's is ${timeline})`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (performance.now() > deadline)
      throw new Error(`the standby does not stream after ${timeoutMs / 1000} s (${last})`);
    await sleep(200);
  }
}

/** A standby re-pointed at a new primary (primary_conninfo reloads without a restart). */
async function follow(d: AgentDirective, ctx: DirectiveContext): Promise<void> {
  const primary = primaryOf(d, ctx);
  await ctx.prober.withConnection(async (c) => {
    if (!(await inRecovery(c))) throw new Error('this instance is a primary, not a standby');
    await c.query(`alter system set primary_conninfo = ${literal(conninfo(primary))}`);
    await c.query('select pg_reload_conf()');
  });
  ctx.log.info({ primary: `${primary.host}:${primary.port}` }, 'now following a new primary');
}

/** ALTER SYSTEM + reload, then waits until the server runs with the new value. */
export async function setSync(value: string, ctx: DirectiveContext): Promise<void> {
  await ctx.prober.withConnection(async (c) => {
    await c.query(`alter system set synchronous_standby_names = ${literal(value)}`);
    await c.query('select pg_reload_conf()');
    const deadline = performance.now() + 10_000;
    for (;;) {
      const { rows } = await c.query<{ v: string }>(
        `select current_setting('synchronous_standby_names') as v`,
      );
      if (rows[0]?.v === value) return;
      if (performance.now() > deadline)
        throw new Error(`synchronous_standby_names is not "${value}" 10 s after the reload`);
      await sleep(20);
    }
  });
  ctx.log.info({ synchronousStandbyNames: value }, 'synchronous_standby_names set');
}
