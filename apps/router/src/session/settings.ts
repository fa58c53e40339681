// Session settings a client made (startup parameters, SET, RESET), kept as the SQL that replays
// them, so a pooled backend serving this client can be brought to the same state in one Query.
import { quoteIdent, quoteLiteral, type SetAnalysis } from '@tessera/sql';
import { parseSearchPath } from '../routing/names.js';

/** Startup parameters that are protocol business, not settings. */
const NOT_SETTINGS = new Set(['user', 'database', 'replication', 'options']);

/** Clears what another client may have left: the backend's login state, then defaults. */
const RESET_SCRIPT = 'SET SESSION AUTHORIZATION DEFAULT; RESET ALL';

// The search_path's value (JSON list of schema names) rides in the entries under keys no setting
// has, so a transaction's save/restore (rollback, savepoints) covers it; key() leaves them out.
const PATH = '\0search_path';
/** SET LOCAL search_path: its value for the open transaction only. */
const LOCAL_PATH = '\0search_path_local';
/** A backend key no session has: its settings are replayed before its next statement. */
const STALE_KEY = '\0stale';
/** A value meaning "the login default" (what a backend's RESET gives). */
const DEFAULT_PATH = 'default';

export class SessionSettings {
  /** The session's defaults (startup packet), what RESET falls back to. */
  private readonly base = new Map<string, string>();
  private entries = new Map<string, string>();
  /**
   * `entries` was handed out by save() (or came from restore()): copied before it changes.
   * Every BEGIN saves the settings; few transactions change them.
   */
  private shared = false;
  private script: string | undefined;
  /** Changes to `entries` in place (a new map is a change too): searchPath()'s memo is keyed by it. */
  private changes = 0;
  /** searchPath()'s last answer, what it was asked under, and the value it parsed. */
  private pathMemo:
    | {
        entries: Map<string, string>;
        changes: number;
        inTransaction: boolean;
        text: string | undefined;
        path: readonly string[] | undefined;
      }
    | undefined;

  /** Startup parameters become settings (`options` with -c name=value pairs too). */
  fromStartup(params: ReadonlyMap<string, string>): void {
    for (const [name, value] of params) {
      if (NOT_SETTINGS.has(name) || name.startsWith('_pq_.')) continue;
      this.startupSetting(name, value);
    }
    const options = params.get('options');
    if (options !== undefined) {
      for (const m of options.matchAll(/(?:-c\s*|--)([A-Za-z_.][\w.]*)=((?:\\.|\S)*)/g)) {
        this.startupSetting(m[1]!, m[2]!.replace(/\\(.)/g, '$1'));
      }
    }
    this.entries = new Map(this.base);
    this.shared = false;
    this.script = undefined;
  }

  private startupSetting(name: string, value: string): void {
    const lower = name.toLowerCase();
    const path = lower === 'search_path' ? parseSearchPath(value) : undefined;
    if (path === undefined || path.length === 0) {
      // A search_path that does not parse is left to the node, whose error the client sees.
      this.base.set(lower, setStatement(name, value));
      return;
    }
    // A list, not one string: SET search_path TO 'a, b' would name one schema "a, b".
    this.base.set(lower, `SET search_path TO ${path.map((p) => quoteIdent(p)).join(', ')}`);
    this.base.set(PATH, JSON.stringify(path));
  }

  /** A SET LOCAL search_path was made: only then does searchPath() depend on the transaction. */
  get hasLocalPath(): boolean {
    return this.entries.has(LOCAL_PATH);
  }

  /**
   * The search_path now (schema names as written, `$user` kept), or undefined for the login
   * default; `inTransaction` false drops what SET LOCAL set in a transaction that has ended.
   */
  searchPath(inTransaction: boolean): readonly string[] | undefined {
    // Asked several times per statement: nothing changed since the last answer, the same answer.
    const m = this.pathMemo;
    if (
      m !== undefined &&
      m.entries === this.entries &&
      m.changes === this.changes &&
      m.inTransaction === inTransaction
    )
      return m.path;
    if (!inTransaction && this.entries.has(LOCAL_PATH)) {
      if (this.shared) this.unshare();
      this.entries.delete(LOCAL_PATH);
    }
    const text = this.entries.get(LOCAL_PATH) ?? this.entries.get(PATH);
    const path = text === undefined ? undefined : text === m?.text ? m.path : parsedPath(text);
    this.pathMemo = { entries: this.entries, changes: this.changes, inTransaction, text, path };
    return path;
  }

  /** Records a successful SET / RESET (SET LOCAL: only the search_path, for name resolution). */
  apply(a: SetAnalysis): void {
    if (this.shared) this.unshare();
    this.changes++;
    if (a.name === 'search_path') this.applyPath(a);
    if (a.isLocal) return;
    const name = a.name ?? a.action;
    switch (a.action) {
      case 'set':
      case 'set_current':
        this.entries.set(name, a.replay);
        break;
      case 'set_multi':
        // SET SESSION CHARACTERISTICS AS TRANSACTION ...; SET TRANSACTION is transaction-scoped.
        if (/^\s*set\s+session\s+characteristics/i.test(a.sql))
          this.entries.set('session_characteristics', a.replay);
        return;
      case 'set_default':
      case 'reset': {
        const b = this.base.get(name);
        if (b !== undefined) this.entries.set(name, b);
        else this.entries.delete(name);
        break;
      }
      case 'reset_all':
        this.entries = new Map(this.base);
        break;
      case 'set_constraints':
        return;
    }
    this.script = undefined;
  }

  private applyPath(a: SetAnalysis): void {
    const key = a.isLocal ? LOCAL_PATH : PATH;
    switch (a.action) {
      case 'set':
        this.entries.set(key, JSON.stringify(a.values));
        break;
      case 'set_default':
      case 'reset':
        this.entries.set(key, this.base.get(PATH) ?? JSON.stringify(DEFAULT_PATH));
        break;
      default:
        return; // FROM CURRENT keeps the value; RESET ALL is handled with the rest
    }
    // A session SET after SET LOCAL in the same transaction is what the transaction sees.
    if (!a.isLocal) this.entries.delete(LOCAL_PATH);
  }

  /**
   * The key a backend that just ran `a` has: the session's, unless `a` reset a setting the
   * session's startup gave (the backend fell back to its own default, not the client's).
   */
  keyAfter(a: SetAnalysis): string {
    const resets = a.action === 'reset' || a.action === 'set_default' || a.action === 'reset_all';
    const fromStartup =
      a.action === 'reset_all' ? this.base.size > 0 : this.base.has(a.name ?? a.action);
    return resets && fromStartup ? STALE_KEY : this.key();
  }

  /**
   * The SQL that set the session's default transaction isolation (SET
   * default_transaction_isolation, SET SESSION CHARACTERISTICS, a startup option), if any.
   */
  isolationDefault(): string | undefined {
    const a = this.entries.get('default_transaction_isolation');
    const b = this.entries.get('session_characteristics');
    return a === undefined ? b : b === undefined ? a : `${a}; ${b}`;
  }

  /** Back to the startup defaults (DISCARD ALL). */
  resetAll(): void {
    this.entries = new Map(this.base);
    this.shared = false;
    this.script = undefined;
  }

  private unshare(): void {
    this.entries = new Map(this.entries);
    this.shared = false;
  }

  /** The replay script; equal scripts mean equal settings. */
  key(): string {
    this.script ??= keyText(this.entries);
    return this.script;
  }

  /** SQL bringing a backend whose settings are `backendKey` to this session's, or undefined. */
  replayFor(backendKey: string): string | undefined {
    return replayScript(backendKey, this.key());
  }

  /**
   * SQL bringing a backend whose settings are `backendKey` to `saved` (settings the session had
   * earlier: a transaction's at BEGIN, whose own SETs its replay then runs inside it).
   */
  replayForSaved(backendKey: string, saved: ReadonlyMap<string, string>): string | undefined {
    return replayScript(backendKey, this.keyOf(saved));
  }

  /** The key of settings saved earlier (save()). */
  keyOf(saved: ReadonlyMap<string, string>): string {
    // No SET since they were saved (a transaction's BEGIN, most often): the memoized key.
    return saved === this.entries ? this.key() : keyText(saved);
  }

  /** The settings now, never changed afterwards (this object copies before it changes them). */
  save(): ReadonlyMap<string, string> {
    this.shared = true;
    return this.entries;
  }

  restore(saved: ReadonlyMap<string, string>): void {
    if (saved === this.entries) return;
    this.entries = saved as Map<string, string>;
    this.shared = true;
    this.script = undefined;
  }
}

/** A search_path entry's value: its schemas, or undefined for the login default. */
function parsedPath(text: string): readonly string[] | undefined {
  const parsed = JSON.parse(text) as string[] | typeof DEFAULT_PATH;
  return parsed === DEFAULT_PATH ? undefined : parsed;
}

/** Settings' key: their SETs in order (the search_path entries are not SETs: see PATH). */
function keyText(settings: ReadonlyMap<string, string>): string {
  const out: string[] = [];
  for (const [name, sql] of settings) if (name !== PATH && name !== LOCAL_PATH) out.push(sql);
  return out.join('; ');
}

function replayScript(backendKey: string, key: string): string | undefined {
  if (backendKey === key) return undefined;
  return key === '' ? RESET_SCRIPT : `${RESET_SCRIPT}; ${key}`;
}

function setStatement(name: string, value: string): string {
  return `SET ${quoteIdent(name.toLowerCase())} TO ${quoteLiteral(value)}`;
}
