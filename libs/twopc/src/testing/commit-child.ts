// Test helper (not exported): one cross-node transaction committed by commitAcrossNodes in its own
// process, as a router would, for kill-matrix.test.ts. It reports on stdout, one line per step,
// what a client could have been told, and SIGKILLs itself at the fault point it is given.
// Each line is written synchronously so it reaches the parent even when the next step is a kill.
//
// Only run as a script: importing it runs it (kill-matrix.test.ts imports its types only).
//
// Input: the JSON of ChildSpec in argv[2]. Lines out:
//   point: <fault point>      reached
//   deciding                  about to call Decide (with `pauseBeforeDecide`, then waits for a stdin line)
//   decision: commit|abort    what the log answered
//   paused: <fault point>     waiting for a stdin line (with `pauseAt`)
//   outcome: committed | in-doubt | error <sqlstate>
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { TxnService, createClient, grpcDecisionLog } from '@tessera/proto';
import { commitAcrossNodes } from '../commit.js';
import { TwoPhaseError } from '../errors.js';
import { sqlParticipant, type DecisionLog, type FaultPoint } from '../participant.js';
import { CHILD_APP } from './cluster.js';

export interface ChildSpec {
  txid: string;
  clusterUid: string;
  nodes: { name: string; port: number }[];
  coordinators: string[];
  /** SIGKILL itself here; 'after-outcome' = after reporting a successful outcome. */
  killAt?: FaultPoint | 'after-outcome';
  /** Wait for a stdin line here (the parent kills the coordinator meanwhile). */
  pauseAt?: FaultPoint;
  pauseBeforeDecide?: boolean;
  /** How long Decide is retried on other coordinators. */
  retryForMs?: number;
}

const say = (line: string): void => void writeSync(1, `${line}\n`);
const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const waitForParent = async (): Promise<void> => void (await stdinLines.next());

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as ChildSpec;
  const clients = await Promise.all(
    spec.nodes.map(async (n) => {
      const c = new pg.Client({
        host: '127.0.0.1',
        port: n.port,
        user: 'postgres',
        database: 'app',
        application_name: CHILD_APP,
      });
      await c.connect();
      await c.query('begin');
      await c.query('insert into rows values ($1, $2)', [spec.txid, n.name]);
      return c;
    }),
  );
  const participants = clients.map((c, i) =>
    sqlParticipant(spec.nodes[i]!.name, (sql) => c.query(sql)),
  );
  // Deadlines far above a Decide's normal few milliseconds: the matrix checks outcomes, and on a
  // loaded machine a 2 s deadline turned logged decisions into in-doubt answers.
  const grpc = grpcDecisionLog(
    spec.coordinators.map((a) => createClient(TxnService, a, { deadlineMs: 10_000 })),
    { callDeadlineMs: 10_000, retryForMs: spec.retryForMs ?? 0 },
  );
  const log: DecisionLog = {
    decide: async (txid, decision, nodes) => {
      if (decision === 'commit') {
        say('deciding');
        if (spec.pauseBeforeDecide) await waitForParent();
      }
      const answer = await grpc.decide(txid, decision, nodes);
      say(`decision: ${answer}`);
      return answer;
    },
  };
  try {
    await commitAcrossNodes(spec.txid, participants, log, {
      clusterUid: spec.clusterUid,
      faultHook: async (point) => {
        say(`point: ${point}`);
        if (point === spec.killAt) process.kill(process.pid, 'SIGKILL');
        if (point === spec.pauseAt) {
          say(`paused: ${point}`);
          await waitForParent();
        }
      },
    });
    say('outcome: committed');
    if (spec.killAt === 'after-outcome') process.kill(process.pid, 'SIGKILL');
  } catch (e) {
    if (e instanceof TwoPhaseError && e.sqlstate === '08007') say('outcome: in-doubt');
    else if (e instanceof TwoPhaseError) say(`outcome: error ${e.sqlstate}`);
    else say(`outcome: error ${(e as { code?: string }).code ?? String(e)}`);
  }
  await Promise.all(clients.map((c) => c.end()));
  process.exit(0);
}

main().catch((e: unknown) => {
  say(`crashed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
