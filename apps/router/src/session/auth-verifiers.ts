// Where `--auth scram` gets a role's SCRAM verifier: the home node's pg_authid, read through a
// service login (--auth-user, TESSERA_AUTH_PASSWORD), cached briefly so a password change or a
// NOLOGIN applies within seconds while a login storm costs the home node one query per role.
// The router never sees or stores a client's password, only what Postgres itself stores.
import { createHash } from 'node:crypto';
import { parseScramVerifier, type ScramVerifier } from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Backend } from '../pool/backend.js';
import { queryText } from '../pool/query-text.js';
import { Pool } from '../pool/pool.js';
import type { Snapshot } from '@tessera/keyspace';

/** What the router knows about a role when a client asks to log in as it. */
export interface RoleSecret {
  /** The role's SCRAM verifier; undefined for no such role, or one without a SCRAM password. */
  readonly verifier: ScramVerifier | undefined;
  /** False for NOLOGIN roles and expired passwords (VALID UNTIL in the past) as of now. */
  readonly mayLogIn: boolean;
  /** Stable per cluster and role: seeds the stand-in verifier when `verifier` is undefined. */
  readonly mockSecret: Buffer;
}

/** The seam the SCRAM exchange depends on (tests can hand in a fixed one). */
export interface RoleSecrets {
  lookup(role: string): Promise<RoleSecret>;
}

export interface VerifierSourceOptions {
  readonly user: string;
  readonly password?: string | undefined;
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  /** How long a looked-up role is trusted (password changes apply after at most this). */
  readonly ttlMs: number;
  /** Roles cached at most; the oldest entry goes first. Bounds memory under random user names. */
  readonly maxEntries: number;
}

interface Cached {
  readonly row: RoleRow;
  readonly expiresAtMs: number;
}

interface RoleRow {
  readonly rolpassword: string | undefined;
  readonly canLogin: boolean;
  /** Seconds since the epoch (Infinity for 'infinity'); undefined = no VALID UNTIL. */
  readonly validUntilS: number | undefined;
  readonly systemId: string;
}

// One row whether or not the role exists (the left join), so an unknown role is a plain answer.
// The cluster's system identifier seeds stand-in verifiers for unknown roles: every router of
// a cluster then shows the same salt for the same unknown name, as a real role's would be.
const LOOKUP_SQL = `select a.rolpassword, a.rolcanlogin,
  extract(epoch from a.rolvaliduntil)::float8 as valid_until,
  (select system_identifier from pg_control_system())::text as system_id
from (select 1) one left join pg_authid a on a.rolname = $1`;

export class VerifierSource implements RoleSecrets {
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<RoleRow>>();
  private pool: Pool | undefined;

  constructor(
    private readonly opts: VerifierSourceOptions,
    private readonly catalog: () => Snapshot | undefined,
  ) {}

  async lookup(role: string): Promise<RoleSecret> {
    const now = Date.now();
    const hit = this.cache.get(role);
    const row = hit && hit.expiresAtMs > now ? hit.row : await this.fetchShared(role);
    const verifier =
      row.rolpassword === undefined ? undefined : parseScramVerifier(row.rolpassword);
    const expired = row.validUntilS !== undefined && row.validUntilS * 1000 <= Date.now();
    return {
      verifier,
      mayLogIn: row.canLogin && !expired,
      mockSecret: createHash('sha256').update(`tessera-mock-auth:${row.systemId}`).digest(),
    };
  }

  close(): void {
    this.pool?.close();
    this.pool = undefined;
    this.cache.clear();
  }

  /** One query per role at a time, however many clients log in as it at once. */
  private fetchShared(role: string): Promise<RoleRow> {
    let p = this.inflight.get(role);
    if (!p) {
      p = this.fetch(role).finally(() => this.inflight.delete(role));
      this.inflight.set(role, p);
    }
    return p;
  }

  private async fetch(role: string): Promise<RoleRow> {
    const pool = this.servicePool();
    let backend: Backend;
    try {
      backend = await pool.acquire(this.opts.connectTimeoutMs);
    } catch (e) {
      throw lookupFailed(e);
    }
    let row: RoleRow;
    try {
      row = await queryRole(backend, role, this.opts.queryTimeoutMs);
    } catch (e) {
      backend.destroy('role lookup failed');
      throw lookupFailed(e);
    } finally {
      pool.release(backend);
    }
    if (this.cache.size >= this.opts.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.delete(role);
    this.cache.set(role, { row, expiresAtMs: Date.now() + this.opts.ttlMs });
    return row;
  }

  /** A small pool to the home node as the service role, replaced if home moves. */
  private servicePool(): Pool {
    const catalog = this.catalog();
    if (!catalog)
      throw new RouterError(
        SQLSTATE.cannotConnectNow,
        'the router has no valid catalog yet; retry shortly',
        'FATAL',
      );
    const addr = catalog.address(catalog.home);
    if (!addr)
      throw new RouterError(SQLSTATE.connectionFailure, 'the home node is not in the catalog');
    const p = this.pool;
    if (
      p &&
      p.target.node === catalog.home &&
      p.target.host === addr.host &&
      p.target.port === addr.port
    )
      return p;
    p?.close();
    this.pool = new Pool(
      {
        node: catalog.home,
        host: addr.host,
        port: addr.port,
        database: 'postgres',
        user: this.opts.user,
        password: this.opts.password,
      },
      2,
      this.opts.connectTimeoutMs,
    );
    return this.pool;
  }
}

/** The client must not learn why the lookup failed; the operator does, from the log. */
function lookupFailed(cause: unknown): RouterError {
  const e = new RouterError(
    SQLSTATE.cannotConnectNow,
    'the router cannot check passwords right now; retry shortly',
    'FATAL',
  );
  (e as { cause?: unknown }).cause = cause;
  return e;
}

/** Runs LOOKUP_SQL for `role` on an idle backend with the extended protocol (no quoting). */
async function queryRole(backend: Backend, role: string, timeoutMs: number): Promise<RoleRow> {
  const rows = await queryText(backend, LOOKUP_SQL, [role], timeoutMs);
  const row = rows[rows.length - 1];
  if (!row) throw new Error('the role lookup returned no row');
  const [password, canLogin, validUntil, systemId] = row;
  return {
    rolpassword: password ?? undefined,
    canLogin: canLogin === 't',
    validUntilS: validUntil === null || validUntil === undefined ? undefined : Number(validUntil),
    systemId: systemId ?? '',
  };
}
