// `tessera txn list|resolve`: cross-node transactions a crash left prepared on the nodes (DESIGN.md
// section 5). The coordinator's recovery loop settles them by itself; these commands show them and
// let an operator settle them now.
import { createInterface } from 'node:readline';
import { Decision, TxnService, createClient, type Client, type InDoubtTxn } from '@tessera/proto';
import type { CommandContext, Command } from '../command.js';
import { boolFlag, stringFlag } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { JSON_FLAG } from '../flags.js';
import { assertNever, textTable, toJson } from '../format.js';

/** Resolve connects to every node; give it longer than a catalog call. */
const RESOLVE_DEADLINE_MS = 120_000;
const LIST_DEADLINE_MS = 30_000;

export interface InDoubtView {
  gid: string;
  txid: string;
  node: string;
  /** The logged decision: commit, abort, or none. */
  decision: string;
  preparedMs: bigint;
  ageMs: number;
}

function decisionName(d: Decision): string {
  switch (d) {
    case Decision.COMMIT:
      return 'commit';
    case Decision.ABORT:
      return 'abort';
    case Decision.UNSPECIFIED:
      return 'none';
    default:
      return assertNever(d);
  }
}

/** gid = tessera:<cluster-uid>:<txid>:<node>; a txid never contains ':'. */
function txidOf(gid: string): string {
  return gid.split(':')[2] ?? '';
}

function view(t: InDoubtTxn, nowMs: number): InDoubtView {
  return {
    gid: t.gid,
    txid: txidOf(t.gid),
    node: t.node,
    decision: decisionName(t.decision),
    preparedMs: t.preparedMs,
    ageMs: Math.max(0, nowMs - Number(t.preparedMs)),
  };
}

function age(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m`;
  return `${Math.round(ms / 3_600_000)}h`;
}

function inDoubtTable(txns: readonly InDoubtView[]): string {
  if (txns.length === 0) return '(no in-doubt transactions)\n';
  return textTable(
    ['txid', 'node', 'decision', 'age', 'gid'],
    txns.map((t) => [t.txid, t.node, t.decision, age(t.ageMs), t.gid]),
  );
}

/** TxnService over the command's coordinator connection (the token matters for Resolve). */
function txnClient(ctx: CommandContext, deadlineMs: number): Client<typeof TxnService> {
  const c = ctx.coordinator();
  const token = stringFlag(ctx.args, 'token') ?? ctx.io.env.TESSERA_ADMIN_TOKEN;
  return createClient(TxnService, c.address, { token, deadlineMs, channel: c.catalog.grpcClient });
}

async function listInDoubt(client: Client<typeof TxnService>): Promise<InDoubtView[]> {
  const { txns } = await client.listInDoubt({}, { deadlineMs: LIST_DEADLINE_MS });
  const now = Date.now();
  return txns
    .map((t) => view(t, now))
    .sort((a, b) => (a.txid === b.txid ? (a.node < b.node ? -1 : 1) : a.txid < b.txid ? -1 : 1));
}

/** One line from a terminal; '' at end of input. */
async function ask(question: string, io: CommandContext['io']): Promise<string> {
  io.err(question);
  const rl = createInterface({ input: process.stdin, terminal: false });
  try {
    return await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
  } finally {
    rl.close();
  }
}

export const txnCommands: Command[] = [
  {
    path: ['txn', 'list'],
    summary: 'list in-doubt transactions: prepared on a node, not finished yet',
    usage: ['txn list [--json]'],
    description:
      'One line per prepared transaction of this cluster on a node that answers (nodes that are down\n' +
      'are skipped), with the decision logged for it at the coordinator (commit, abort, or none yet)\n' +
      "and its age by this machine's clock. The coordinator's recovery loop finishes them by itself;\n" +
      'one that stays here has a node it cannot reach, or is younger than the grace period.',
    examples: ['tessera txn list', "tessera txn list --json | jq '.txns[] | .txid'"],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run(ctx) {
      const client = txnClient(ctx, LIST_DEADLINE_MS);
      try {
        const txns = await listInDoubt(client);
        ctx.io.out(boolFlag(ctx.args, 'json') ? toJson({ txns }) : inDoubtTable(txns));
        return 0;
      } finally {
        client.close();
      }
    },
  },
  {
    path: ['txn', 'resolve'],
    summary: 'finish in-doubt transactions now, as the decision log says',
    usage: ['txn resolve [TXID] [--yes]'],
    description:
      'Commits what has a logged commit and rolls back what has a logged abort. With TXID, a\n' +
      'transaction with no decision yet is aborted at once (abort is logged first, so a router that\n' +
      'decides later is told abort). Without TXID every in-doubt transaction is resolved, except\n' +
      'undecided ones younger than the grace period: their routers may still be committing them.\n' +
      'Asks for confirmation on a terminal; elsewhere --yes is required.',
    examples: ['tessera txn resolve', 'tessera txn resolve r1-m3k2x9-5f2c0a1b-7 --yes'],
    flags: { yes: { type: 'boolean', short: 'y', description: 'do not ask for confirmation' } },
    positionals: { min: 0, max: 1 },
    usesCoordinator: true,
    async run(ctx) {
      const { args, io } = ctx;
      const txid = args.positionals[0] ?? '';
      if (txid !== '' && !/^[A-Za-z0-9_-]+$/.test(txid))
        throw new UsageError(
          `"${txid}" is not a txid (letters, digits, "_" and "-"; see \`tessera txn list\`)`,
        );
      const client = txnClient(ctx, RESOLVE_DEADLINE_MS);
      try {
        if (!boolFlag(args, 'yes')) {
          if (!process.stdin.isTTY)
            throw new UsageError('txn resolve changes data on the nodes: pass --yes to confirm');
          const mine = (await listInDoubt(client)).filter((t) => txid === '' || t.txid === txid);
          if (mine.length === 0) {
            io.out(`no in-doubt transactions${txid ? ` for ${txid}` : ''}\n`);
            return 0;
          }
          io.out(inDoubtTable(mine));
          const answer = await ask(
            `Resolve ${mine.length} prepared transaction(s) as shown${txid ? ' (undecided ones are aborted)' : ''}? [y/N] `,
            io,
          );
          if (!/^y(es)?$/i.test(answer.trim()))
            throw new CliError('not confirmed; nothing was changed');
        }
        const res = await client.resolve({ txid });
        io.out(
          `committed ${res.committed}, rolled back ${res.rolledBack} prepared transaction(s)\n`,
        );
        const left = (await listInDoubt(client)).filter((t) => txid === '' || t.txid === txid);
        if (left.length === 0) return 0;
        if (txid !== '')
          throw new CliError(
            `${left.length} prepared transaction(s) of ${txid} are still in doubt (is a node down?); the coordinator's recovery loop keeps trying`,
          );
        io.out(
          `${left.length} still in doubt: undecided ones within the grace period, or on a node that failed; \`tessera txn list\` shows them\n`,
        );
        return 0;
      } finally {
        client.close();
      }
    },
  },
];
