// Session settings a client made (startup parameters, SET, RESET), kept as the SQL that replays
// them, so a pooled backend serving this client can be brought to the same state in one Query.
import { quoteIdent, quoteLiteral, type SetAnalysis } from '@tessera/sql';

/** Startup parameters that are protocol business, not settings. */
const NOT_SETTINGS = new Set(['user', 'database', 'replication', 'options']);

/** Clears what another client may have left: the backend's login state, then defaults. */
const RESET_SCRIPT = 'SET SESSION AUTHORIZATION DEFAULT; RESET ALL';

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

  /** Startup parameters become settings (`options` with -c name=value pairs too). */
  fromStartup(params: ReadonlyMap<string, string>): void {
    for (const [name, value] of params) {
      if (NOT_SETTINGS.has(name) || name.startsWith('_pq_.')) continue;
      this.base.set(name.toLowerCase(), setStatement(name, value));
    }
    const options = params.get('options');
    if (options !== undefined) {
      for (const m of options.matchAll(/(?:-c\s*|--)([A-Za-z_.][\w.]*)=((?:\\.|\S)*)/g)) {
        this.base.set(m[1]!.toLowerCase(), setStatement(m[1]!, m[2]!.replace(/\\(.)/g, '$1')));
      }
    }
    this.entries = new Map(this.base);
    this.shared = false;
    this.script = undefined;
  }

  /** Records a successful SET / RESET outside SET LOCAL. */
  apply(a: SetAnalysis): void {
    if (a.isLocal) return;
    const name = a.name ?? a.action;
    if (this.shared) this.unshare();
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
    this.script ??= [...this.entries.values()].join('; ');
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
    return [...saved.values()].join('; ');
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

function replayScript(backendKey: string, key: string): string | undefined {
  if (backendKey === key) return undefined;
  return key === '' ? RESET_SCRIPT : `${RESET_SCRIPT}; ${key}`;
}

function setStatement(name: string, value: string): string {
  return `SET ${quoteIdent(name.toLowerCase())} TO ${quoteLiteral(value)}`;
}
