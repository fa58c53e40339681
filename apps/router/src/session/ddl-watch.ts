// DDL through another router changes what this router's sessions' unqualified names resolve to.
// A router that finished DDL for a client NOTIFYs `tessera_names` on home in that database
// (session/names.ts announceDdl); per database that clients use, every router keeps one
// connection to home as its service role (--auth-user) that LISTENs on it. Each notification
// makes every session's name facts stale: they are read again before the session's next
// statement. Then the watch acknowledges it with a NOTIFY on `tessera_names_ack`. The router that
// announced counts the watches listening on home when it sent its notification, and answers its
// client only once that many watches acknowledged (or a deadline passed): every router's sessions
// are stale by then, however late its watch heard it. A login waits for its database's watch (the
// first login of a database, a few ms) before it reads its facts, so only a reconnect, or a login
// that went on without a watch, makes them all stale as well. Nothing is created in the database.
import { randomBytes } from 'node:crypto';
import type { Snapshot } from '@tessera/keyspace';
import type { Logger } from '@tessera/telemetry';
import { BackendCode, Writer, decodeNotificationResponse, writeQuery } from '@tessera/pg-wire';
import { Backend, type BackendSink } from '../pool/backend.js';
import { queryText } from '../pool/query-text.js';

export const NAMES_CHANNEL = 'tessera_names';
/** Where each watch acknowledges a notification it heard: `<payload> <watch id>`. */
export const ACK_CHANNEL = 'tessera_names_ack';
/** The watch's application_name on home (pg_stat_activity). */
export const WATCH_APPLICATION_NAME = 'tessera-router ddl watch';

/**
 * An announcement (session/names.ts): notifies, and counts in the same statement the watches
 * listening in this database (`announceParams`). A watch that starts listening later reads
 * every session's facts again when it connects.
 */
export const ANNOUNCE_SQL =
  'select (select count(*)::int from pg_stat_activity where datname = current_database() ' +
  'and application_name = $3 and usename = $4), pg_notify($1, $2)';

/** ANNOUNCE_SQL's parameters: the payload `token`, the watches' role `user`. */
export function announceParams(token: string, user: string): string[] {
  return [NAMES_CHANNEL, token, WATCH_APPLICATION_NAME, user];
}

export interface DdlWatchOptions {
  readonly user: string;
  readonly password: string | undefined;
  readonly connectTimeoutMs: number;
  readonly catalog: () => Snapshot | undefined;
  /** Every session's name facts are stale from now on. */
  readonly changed: () => void;
  readonly log: Logger;
  /** Called with each notification's database, for metrics. */
  readonly counted?: (database: string) => void;
}

interface Watched {
  backend: Backend | undefined;
  /** The home address `backend` is connected to. */
  address: string;
  connecting: boolean;
  failures: number;
  /** Facts may have been read while nothing listened: a connect makes every session's stale. */
  missed: boolean;
  /** Logins waiting for the connect under way (settled either way). */
  waiting: (() => void)[];
  /** Announcements waiting for the watches' acknowledgements, by payload. */
  echoes: Map<string, Echo>;
  retry: NodeJS.Timeout | undefined;
}

/** One LISTEN connection to home per database in use, kept open and following home. */
export class DdlWatch {
  private readonly watched = new Map<string, Watched>();
  private stopped = false;
  /** Names this watch in its acknowledgements (one per router process). */
  readonly id = randomBytes(6).toString('hex');

  constructor(private readonly opts: DdlWatchOptions) {}

  /** The role the watches log in as. */
  get user(): string {
    return this.opts.user;
  }

  /**
   * Makes sure `database` is watched (called at each login, before it reads its facts);
   * undefined when it already is, else settles once the connect under way succeeded or failed.
   */
  watch(database: string): Promise<void> | undefined {
    if (this.stopped) return undefined;
    let w = this.watched.get(database);
    if (w === undefined) {
      w = {
        backend: undefined,
        address: '',
        connecting: false,
        failures: 0,
        missed: false,
        waiting: [],
        echoes: new Map(),
        retry: undefined,
      };
      this.watched.set(database, w);
    }
    const home = this.homeAddress();
    if (live(w) && w.address === home) return undefined;
    if (w.failures > 0) {
      // Down for a while: the login goes on, and the next connect makes its facts stale.
      w.missed = true;
      if (!w.connecting && w.retry === undefined) this.connect(database, w);
      return undefined;
    }
    const wait = new Promise<void>((resolve) => w.waiting.push(resolve));
    this.connect(database, w);
    return wait;
  }

  /** The catalog changed: a watch still connected to a former home is moved to the new one. */
  follow(): void {
    const home = this.homeAddress();
    for (const [database, w] of this.watched) {
      if (live(w) && w.address === home) continue;
      this.connect(database, w);
    }
  }

  /**
   * Waits for the watches on home to acknowledge the notification whose payload is `token`
   * (sent after this call): `heard(n)` resolves once `n` distinct watches did, this router's own
   * among them, or after `timeoutMs`. Undefined when this router does not listen on `database`.
   */
  echo(database: string, token: string, timeoutMs: number): Echo | undefined {
    const w = this.watched.get(database);
    if (w === undefined || !live(w)) return undefined;
    const echo = new Echo(timeoutMs, () => w.echoes.delete(token));
    w.echoes.set(token, echo);
    return echo;
  }

  /** How many databases are being listened to now (for metrics). */
  listening(): number {
    let n = 0;
    for (const w of this.watched.values()) if (live(w)) n++;
    return n;
  }

  close(): void {
    this.stopped = true;
    for (const w of this.watched.values()) {
      clearTimeout(w.retry);
      w.backend?.destroy('router stopping');
      settle(w);
      for (const echo of [...w.echoes.values()]) echo.end();
    }
    this.watched.clear();
  }

  private homeAddress(): string {
    const c = this.opts.catalog();
    const a = c?.address(c.home);
    return a === undefined ? '' : `${a.host}:${a.port}`;
  }

  private connect(database: string, w: Watched): void {
    if (w.connecting || this.stopped) return;
    clearTimeout(w.retry);
    w.retry = undefined;
    const c = this.opts.catalog();
    const addr = c?.address(c.home);
    if (c === undefined || addr === undefined) return this.later(database, w);
    if (live(w)) {
      if (w.address === `${addr.host}:${addr.port}`) return settle(w);
      // Home moved: its former watch goes (its close is not a loss), facts may be stale.
      const former = w.backend;
      w.backend = undefined;
      w.missed = true;
      former?.destroy('home moved');
    }
    w.connecting = true;
    w.address = `${addr.host}:${addr.port}`;
    const target = {
      node: c.home,
      host: addr.host,
      port: addr.port,
      database,
      user: this.opts.user,
      password: this.opts.password,
      applicationName: WATCH_APPLICATION_NAME,
    };
    const timeout = this.opts.connectTimeoutMs;
    Backend.connect(target, timeout)
      .then(async (b) => {
        try {
          await queryText(b, `LISTEN ${NAMES_CHANNEL}`, [], timeout);
          await queryText(b, `LISTEN ${ACK_CHANNEL}`, [], timeout);
        } catch (e) {
          b.destroy('names watch setup failed');
          throw e;
        }
        return b;
      })
      .then(
        (b) => {
          w.connecting = false;
          if (this.stopped || this.watched.get(database) !== w) return b.destroy('not needed');
          w.backend = b;
          w.failures = 0;
          b.attach(this.sink(database, w));
          // DDL may have committed while nothing listened, after some session read its facts.
          if (w.missed) this.opts.changed();
          w.missed = false;
          settle(w);
          this.opts.log.debug({ database, home: w.address }, 'watching home for DDL');
        },
        (e: unknown) => {
          w.connecting = false;
          w.missed = true;
          settle(w);
          if (w.failures++ === 0)
            this.opts.log.warn(
              { err: e, database, home: w.address },
              'cannot watch home for DDL: names created through other routers are seen by ' +
                "this router's sessions only after DDL through it or a reconnect; retrying",
            );
          this.later(database, w);
        },
      );
  }

  /** Tries again with a backoff (1 s doubling to 30 s). */
  private later(database: string, w: Watched): void {
    if (this.stopped) return;
    clearTimeout(w.retry);
    const ms = Math.min(30_000, 1000 * 2 ** Math.min(5, w.failures));
    w.retry = setTimeout(() => this.connect(database, w), ms);
    w.retry.unref();
  }

  private sink(database: string, w: Watched): BackendSink {
    return {
      onReadable: (b) => {
        for (let f = b.nextFrame(); f; f = b.nextFrame()) {
          if (f.code !== BackendCode.NotificationResponse) continue;
          const { channel, payload } = decodeNotificationResponse(f.body);
          if (channel === ACK_CHANNEL) {
            const space = payload.lastIndexOf(' ');
            w.echoes.get(payload.slice(0, space))?.acknowledged(payload.slice(space + 1));
            continue;
          }
          this.opts.counted?.(database);
          this.opts.changed();
          // Stale from now on: the announcing router may answer its client. A payload not made
          // by a router (anyone may NOTIFY) is not repeated into SQL.
          if (TOKEN.test(payload))
            b.write(
              writeQuery(new Writer(64), `NOTIFY ${ACK_CHANNEL}, '${payload} ${this.id}'`).flush(),
            );
        }
      },
      onClosed: (b) => {
        // The former home's watch, closed after follow() opened the next one: nothing to do.
        if (w.backend !== b) return;
        w.backend = undefined;
        for (const echo of [...w.echoes.values()]) echo.end();
        w.missed = true;
        this.opts.log.info({ database, home: w.address }, 'the DDL watch on home closed');
        this.later(database, w);
      },
    };
  }
}

/** `w` has a watch connection that is open (to whichever home it was made to). */
function live(w: Watched): boolean {
  return w.backend !== undefined && !w.backend.dead;
}

/** Lets the logins waiting for `w`'s connect go on. */
function settle(w: Watched): void {
  const waiting = w.waiting;
  w.waiting = [];
  for (const go of waiting) go();
}

/** What announcements' payloads are made of (session/names.ts). */
const TOKEN = /^[0-9a-z:]{1,100}$/;

/** One announcement's acknowledgements: the watches that heard it, until enough did. */
export class Echo {
  private readonly ackers = new Set<string>();
  private expected = Infinity;
  private resolve: (() => void) | undefined;
  private readonly done: Promise<void>;
  private readonly timer: NodeJS.Timeout;
  private ended = false;

  constructor(
    timeoutMs: number,
    private readonly forget: () => void,
  ) {
    this.done = new Promise((r) => (this.resolve = r));
    this.timer = setTimeout(() => this.end(), timeoutMs);
  }

  /** Resolves once `n` watches acknowledged (some may have before this call) or at the deadline. */
  heard(n: number): Promise<void> {
    this.expected = n;
    if (this.ackers.size >= n) this.end();
    return this.done;
  }

  /** How many watches acknowledged so far. */
  get count(): number {
    return this.ackers.size;
  }

  acknowledged(watch: string): void {
    this.ackers.add(watch);
    if (this.ackers.size >= this.expected) this.end();
  }

  /** Stops waiting (enough acknowledgements, the deadline, the watch closed, or no expectation). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.forget();
    this.resolve!();
  }
}
