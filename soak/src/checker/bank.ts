// Checks of the bank (docs/soak.md, "Bank"): accounts spread over every node, each transfer one
// transaction (two-phase commit when its accounts are on different nodes) that moves money and
// writes one leg row per account, colocated with the account.
import type { FinalState } from './final-state.js';
import type { Findings } from './findings.js';
import type { HistoryEvent, Op } from './history.js';
import { F, TABLES, balancesOf, transferOf, type TransferValue } from './values.js';

export interface BankStats {
  accounts: number;
  transfers: number;
  reads: number;
}

/** The setup event that says which accounts exist and what they started with. */
export const BANK_INIT = 'bank-init';

export function checkBank(
  ops: readonly Op[],
  meta: readonly HistoryEvent[],
  final: FinalState | undefined,
  out: Findings,
): BankStats {
  const transfers = new Map<number, { t: TransferValue; op: Op }>();
  const reads: { op: Op; balances: [number, number][] }[] = [];
  for (const op of ops) {
    if (op.f === F.transfer) {
      const t = transferOf(op.invoke);
      if (!t)
        out.add('history-malformed', `transfer at event ${op.invokeIndex} has no valid value`);
      else if (transfers.has(t.id))
        out.add('history-malformed', `transfer id ${t.id} is used twice`);
      else transfers.set(t.id, { t, op });
    } else if (op.f === F.balances && op.status === 'ok') {
      const b = balancesOf(op.value);
      if (b) reads.push({ op, balances: b });
      else
        out.add('history-malformed', `ok balances read at event ${op.invokeIndex} has no balances`);
    }
  }
  const initEvent = [...meta].reverse().find((e) => e.process === 'setup' && e.f === BANK_INIT);
  const init = balancesOf(initEvent?.value);
  const stats: BankStats = {
    accounts: init?.length ?? 0,
    transfers: transfers.size,
    reads: reads.length,
  };
  if (!init) {
    if (transfers.size > 0 || reads.length > 0)
      out.add('history-malformed', 'bank operations without a bank-init setup event');
    return stats;
  }
  const start = new Map(init);
  let total = 0;
  for (const [, b] of init) total += b;

  for (const { op, balances } of reads) {
    const ids = new Set(balances.map(([id]) => id));
    if (
      ids.size !== balances.length ||
      ids.size !== start.size ||
      [...ids].some((id) => !start.has(id))
    ) {
      out.add(
        'bank-read-shape',
        `balances read by process ${op.process} (event ${op.invokeIndex}) has ${balances.length} rows for ${start.size} accounts`,
      );
      continue;
    }
    let sum = 0;
    for (const [id, b] of balances) {
      sum += b;
      if (b < 0) out.add('bank-negative', `account ${id} read as ${b} by process ${op.process}`);
    }
    if (sum !== total)
      out.addFractured(
        'bank',
        `balances read by process ${op.process} (event ${op.invokeIndex}) sums to ${sum}, not ${total}`,
      );
  }
  if (!final) return stats;

  const balance = new Map<number, number>();
  for (const row of final.ownedRowsOf(TABLES.accounts.name, TABLES.accounts.keyspace))
    balance.set(Number(row.get('id')), Number(row.get('balance')));
  const legsOf = new Map<number, { account: number; amount: number }[]>();
  const legSum = new Map<number, number>();
  for (const row of final.ownedRowsOf(TABLES.legs.name, TABLES.legs.keyspace)) {
    const account = Number(row.get('account_id'));
    const id = Number(row.get('transfer_id'));
    const amount = Number(row.get('amount'));
    const list = legsOf.get(id) ?? [];
    list.push({ account, amount });
    legsOf.set(id, list);
    legSum.set(account, (legSum.get(account) ?? 0) + amount);
  }

  let sum = 0;
  for (const [id, b] of balance) {
    sum += b;
    if (b < 0) out.add('bank-negative', `account ${id} ends at ${b}`);
    if (!start.has(id))
      out.add('bank-total', `account ${id} exists at the end but was never created`);
  }
  for (const id of start.keys())
    if (!balance.has(id)) out.add('bank-total', `account ${id} is missing at the end`);
  if (sum !== total) out.add('bank-total', `final balances sum to ${sum}, not ${total}`);
  for (const [id, b0] of start) {
    const b = balance.get(id);
    if (b === undefined) continue;
    const legs = legSum.get(id) ?? 0;
    if (b !== b0 + legs)
      out.add(
        'bank-balance-ledger',
        `account ${id} ends at ${b}; it started at ${b0} and its legs sum to ${legs}`,
      );
  }
  for (const id of legsOf.keys()) {
    if (!transfers.has(id))
      out.add('bank-invented', `legs of transfer ${id}, which was never attempted`);
  }
  for (const [id, { t, op }] of transfers) {
    const legs = legsOf.get(id) ?? [];
    const expect = op.status === 'ok' ? [2] : op.status === 'fail' ? [0] : [0, 2];
    if (!expect.includes(legs.length)) {
      out.add(
        'bank-legs',
        `${op.status} transfer ${id} (process ${op.process}) has ${legs.length} legs`,
      );
      continue;
    }
    if (legs.length === 2) {
      const from = legs.find((l) => l.account === t.from);
      const to = legs.find((l) => l.account === t.to);
      if (!from || !to || from.amount !== -t.amount || to.amount !== t.amount)
        out.add(
          'bank-legs',
          `transfer ${id}'s legs ${JSON.stringify(legs)} do not move ${t.amount} from ${t.from} to ${t.to}`,
        );
    }
  }
  return stats;
}
