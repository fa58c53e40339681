// The seams commitAcrossNodes needs, owned here and implemented by its caller (STYLE.md principle
// 5): one open transaction on one node, and the coordinator's decision log. The router adapts its
// backend connections and its coordinator client to these.

/** One node's open transaction, on the connection that ran its statements. */
export interface Participant {
  /** The node's catalog name; it ends the gid and is logged as a participant. */
  readonly node: string;
  /** `PREPARE TRANSACTION 'gid'`; rejects with the node's error (e.g. 23505) if it fails. */
  prepare(gid: string): Promise<void>;
  /** `COMMIT PREPARED 'gid'` (any connection to the same database would do). */
  commitPrepared(gid: string): Promise<void>;
  /** `ROLLBACK PREPARED 'gid'`. */
  rollbackPrepared(gid: string): Promise<void>;
  /** A plain `ROLLBACK` of the open, unprepared transaction. */
  rollback(): Promise<void>;
}

export type DecisionText = 'commit' | 'abort';

/** The coordinator's log (TxnService.Decide): the first decision logged for a txid wins. */
export interface DecisionLog {
  /** Logs `decision` unless one is logged already; resolves with the logged one, once durable. */
  decide(txid: string, decision: DecisionText, participants: string[]): Promise<DecisionText>;
}

/** Where a test's fault hook runs, in the order they are reached. */
export type FaultPoint =
  | 'before-prepare'
  | `after-prepare:${string}`
  | 'after-decision'
  | `after-commit:${string}`
  | 'after-all';

/** Something that runs `sql` as one simple query on an open session and rejects with its error. */
export type RunSql = (sql: string) => Promise<unknown>;

/**
 * A Participant over any session that can run one SQL string: the router's backend connection, a
 * `pg.Client` in tests. The gid is quoted although gidFor only makes safe ones.
 */
export function sqlParticipant(node: string, run: RunSql): Participant {
  const lit = (gid: string): string => `'${gid.replaceAll("'", "''")}'`;
  return {
    node,
    prepare: async (gid) => void (await run(`PREPARE TRANSACTION ${lit(gid)}`)),
    commitPrepared: async (gid) => void (await run(`COMMIT PREPARED ${lit(gid)}`)),
    rollbackPrepared: async (gid) => void (await run(`ROLLBACK PREPARED ${lit(gid)}`)),
    rollback: async () => void (await run('ROLLBACK')),
  };
}
