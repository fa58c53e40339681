// Transactions a crash left prepared on the nodes (DESIGN.md section 5), settled by the decision
// log: logged commit -> COMMIT PREPARED, logged abort -> ROLLBACK PREPARED, nothing logged -> log
// abort first (the first decision wins, so a commit that raced in is obeyed instead), then obey
// the log. Used by ListInDoubt/Resolve and by the background loop (recovery-loop.ts).
import { create, Decision, InDoubtTxnSchema, type InDoubtTxn, type Node } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { TxnLog } from '../store/txn-log.js';
import type { RecoveryMetrics } from './metrics.js';
import { errorText, withNode, type NodeAuth } from './node-sessions.js';
import { scanPrepared, type PreparedTxn, type Scan } from './prepared-scan.js';

export { nodeAuthFromUrl, type NodeAuth } from './node-sessions.js';
export type { PreparedTxn } from './prepared-scan.js';

export interface InDoubtDeps {
  nodes: () => Promise<{ clusterUid: string; nodes: readonly Node[] }>;
  txns: TxnLog;
  auth: NodeAuth;
  /** An undecided prepared transaction younger than this may still be decided by its router. */
  graceMs: number;
  log: Logger;
  connectTimeoutMs?: number;
  metrics?: RecoveryMetrics;
}

export interface Settled {
  committed: number;
  rolledBack: number;
  /** Prepared transactions still on the nodes: undecided within grace, or that could not be finished. */
  left: number;
  /** Txids that still have a gid on some node after settling. */
  present: Set<string>;
}

export interface Pass extends Settled {
  scan: Scan;
}

export class InDoubtResolver {
  constructor(private readonly deps: InDoubtDeps) {}

  async list(): Promise<InDoubtTxn[]> {
    const { txns } = await this.scan();
    const decisions = await this.deps.txns.getMany([...new Set(txns.map((p) => p.txid))]);
    return txns.map((p) =>
      create(InDoubtTxnSchema, {
        gid: p.gid,
        node: p.node,
        decision: decisions.get(p.txid)?.decision ?? Decision.UNSPECIFIED,
        preparedMs: BigInt(p.preparedMs),
      }),
    );
  }

  /**
   * Resolve: for one named txid the logged outcome is forced now, an undecided one aborted at
   * once (an operator asked for it). For every txid (`''`), undecided ones younger than the grace
   * period are left alone: their routers may be about to decide them.
   */
  async resolve(txid: string): Promise<{ committed: number; rolledBack: number }> {
    const { txns } = await this.scan();
    const mine = txns.filter((p) => txid === '' || p.txid === txid);
    const { committed, rolledBack } = await this.settle(mine, txid !== '');
    return { committed, rolledBack };
  }

  /** One pass of the background loop: scan every node, settle what is due. */
  async sweep(): Promise<Pass> {
    const scan = await this.scan();
    const settled = await this.settle(scan.txns, false);
    this.deps.metrics?.inDoubt.set(settled.left);
    return { ...settled, scan };
  }

  private async scan(): Promise<Scan> {
    const { clusterUid, nodes } = await this.deps.nodes();
    const scan = await scanPrepared(clusterUid, nodes, {
      auth: this.deps.auth,
      connectTimeoutMs: this.deps.connectTimeoutMs ?? 3_000,
      log: this.deps.log,
    });
    for (const u of scan.unreachable) this.deps.metrics?.nodeErrors.inc({ node: u.node });
    return scan;
  }

  private async settle(prepared: readonly PreparedTxn[], force: boolean): Promise<Settled> {
    const byTxid = new Map<string, PreparedTxn[]>();
    for (const p of prepared) byTxid.set(p.txid, [...(byTxid.get(p.txid) ?? []), p]);
    const decisions = await this.deps.txns.getMany([...byTxid.keys()]);
    const commit = new Map<string, boolean>();
    for (const [txid, gids] of byTxid) {
      let decision = decisions.get(txid)?.decision;
      if (decision === undefined) {
        const oldestMs = Math.max(...gids.map((p) => p.ageMs));
        if (!force && oldestMs < this.deps.graceMs) continue; // its router may still decide
        // Logged before anything is rolled back: if the router's commit got in first, we obey it.
        const record = await this.deps.txns.decide(
          txid,
          Decision.ABORT,
          gids.map((p) => p.node),
        );
        decision = record.decision;
        this.deps.log.info(
          { txid, decision: decision === Decision.COMMIT ? 'commit' : 'abort', oldestMs },
          'no decision was logged for a prepared transaction; logged abort',
        );
      }
      commit.set(txid, decision === Decision.COMMIT);
    }

    // One connection per (node, database): COMMIT PREPARED must run in the gid's own database.
    const groups = new Map<string, PreparedTxn[]>();
    for (const p of prepared) {
      if (!commit.has(p.txid)) continue;
      const key = `${p.node}\0${p.database}`;
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    const result: Settled = { committed: 0, rolledBack: 0, left: 0, present: new Set() };
    const ended = new Map<string, 'done' | 'gone'>();
    await Promise.all([...groups.values()].map((group) => this.finishGroup(group, commit, ended)));
    for (const p of prepared) {
      const how = ended.get(p.gid);
      if (how === undefined) {
        result.left++;
        result.present.add(p.txid);
      } else if (how === 'gone') continue;
      else if (commit.get(p.txid)) result.committed++;
      else result.rolledBack++;
    }
    return result;
  }

  /**
   * Finishes a node/database's gids on one connection, noting in `ended` each gid this call
   * finished ('done') or found already finished by someone else ('gone').
   */
  private async finishGroup(
    group: readonly PreparedTxn[],
    commit: ReadonlyMap<string, boolean>,
    ended: Map<string, 'done' | 'gone'>,
  ): Promise<void> {
    const first = group[0] as PreparedTxn;
    try {
      await withNode(
        first,
        first.database,
        this.deps.auth,
        this.deps.connectTimeoutMs ?? 3_000,
        async (c) => {
          for (const p of group) {
            const doCommit = commit.get(p.txid) === true;
            try {
              await c.query(
                `${doCommit ? 'commit' : 'rollback'} prepared ${c.escapeLiteral(p.gid)}`,
              );
              ended.set(p.gid, 'done');
              this.deps.metrics?.recovered.inc({ outcome: doCommit ? 'commit' : 'abort' });
              this.deps.log.info(
                { gid: p.gid, node: p.node, outcome: doCommit ? 'commit' : 'abort' },
                'resolved a prepared transaction',
              );
            } catch (e) {
              // 42704: already finished by someone else (its router, or a concurrent resolve).
              if ((e as { code?: unknown }).code === '42704') {
                ended.set(p.gid, 'gone');
                continue;
              }
              this.deps.log.warn(
                { gid: p.gid, node: p.node, err: errorText(e) },
                'cannot resolve a prepared transaction; will retry',
              );
            }
          }
        },
      );
    } catch (e) {
      this.deps.log.warn(
        { node: first.node, database: first.database, err: errorText(e) },
        'cannot connect to resolve prepared transactions; will retry',
      );
    }
  }
}
