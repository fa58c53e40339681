// The 2PC decision log (DESIGN.md section 5). The first decision logged for a txid wins; a
// decision is durable (synchronous_commit on, whatever the server default) before it is returned.
import { create, TxnRecordSchema, type Decision, type TxnRecord } from '@tessera/proto';
import type pg from 'pg';
import { invalidArgument } from '../errors.js';
import { transaction } from './db.js';
import { decisionFromText, decisionToText, type DecisionText } from './enums.js';

interface DecisionRow {
  txid: string;
  decision: DecisionText;
  participants: string[];
  decided_ms: string;
}

const COLUMNS = `txid, decision, participants, (extract(epoch from decided_at) * 1000)::int8::text as decided_ms`;

function toRecord(r: DecisionRow): TxnRecord {
  return create(TxnRecordSchema, {
    txid: r.txid,
    decision: decisionFromText(r.decision),
    participants: r.participants,
    decidedMs: BigInt(r.decided_ms),
  });
}

export class TxnLog {
  constructor(private readonly pool: pg.Pool) {}

  /** Logs `decision` unless one is already logged; returns the logged one either way. */
  async decide(
    txid: string,
    decision: Decision,
    participants: readonly string[],
  ): Promise<TxnRecord> {
    if (txid === '') throw invalidArgument('a decision needs a txid');
    const text = decisionToText(decision);
    if (text === undefined)
      throw invalidArgument(`decision ${decision} is not one of DECISION_COMMIT, DECISION_ABORT`);
    return transaction(this.pool, async (c) => {
      await c.query('set local synchronous_commit = on');
      await c.query(
        `insert into tessera.txn_decision (txid, decision, participants) values ($1, $2, $3) on conflict (txid) do nothing`,
        [txid, text, participants],
      );
      const { rows } = await c.query<DecisionRow>(
        `select ${COLUMNS} from tessera.txn_decision where txid = $1`,
        [txid],
      );
      return toRecord(rows[0]!);
    });
  }

  async get(txid: string): Promise<TxnRecord | undefined> {
    return transaction(
      this.pool,
      async (c) => {
        const { rows } = await c.query<DecisionRow>(
          `select ${COLUMNS} from tessera.txn_decision where txid = $1`,
          [txid],
        );
        return rows[0] ? toRecord(rows[0]) : undefined;
      },
      { readOnly: true },
    );
  }

  /** The logged decisions for many txids at once (absent ones are missing from the map). */
  async getMany(txids: readonly string[]): Promise<Map<string, TxnRecord>> {
    if (txids.length === 0) return new Map();
    return transaction(
      this.pool,
      async (c) => {
        const { rows } = await c.query<DecisionRow>(
          `select ${COLUMNS} from tessera.txn_decision where txid = any($1::text[])`,
          [txids],
        );
        return new Map(rows.map((r) => [r.txid, toRecord(r)]));
      },
      { readOnly: true },
    );
  }
}
