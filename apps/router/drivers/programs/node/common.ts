// What the two Node.js programs share: the data every program writes, and one normalised output
// line per operation (`op<TAB>value`; a failed operation prints `ERROR <SQLSTATE>`).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const URL_ = process.env.DRV_URL ?? '';
if (!URL_) throw new Error('DRV_URL is not set');

export const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;

/** Account i of the seed (1..20): [id, owner, currency, balance, opened]. */
export function seedAccount(i: number): [number, string, string, string, string] {
  return [
    i,
    `owner-${i}`,
    CURRENCIES[i % 3]!,
    `${i * 100}.00`,
    `2024-01-${String(i).padStart(2, '0')}`,
  ];
}

/** Entry j (1..3) of account i: [account_id, id, amount, note]. */
export function seedEntry(i: number, j: number): [number, number, string, string] {
  return [i, j, `${i * 10 + j}.00`, `e${j}`];
}

export const DDL = [
  'create table currencies (code text primary key, name text not null, rate numeric(10,4) not null)',
  `create table accounts (id bigint primary key, owner text not null,
     currency text not null references currencies (code), balance numeric(12,2) not null,
     status text not null default 'open', opened date not null)`,
  `create table entries (account_id bigint not null references accounts (id), id bigint not null,
     amount numeric(12,2) not null, note text, primary key (account_id, id))`,
  `create table audit (id bigint primary key, account_id bigint, action text not null)`,
  `insert into currencies values ('EUR', 'Euro', 1.0000), ('USD', 'US dollar', 1.0800),
     ('GBP', 'Pound sterling', 0.8600)`,
];

export const FINAL = {
  'final.accounts': 'select id, owner, currency, balance, status, opened from accounts order by id',
  'final.entries': 'select account_id, id, amount, note from entries order by account_id, id',
  'final.currencies': 'select code, name, rate from currencies order by code',
  'final.audit': 'select id, account_id, action from audit order by id',
} as const;

/** An installed package's version, read from its package.json (not every package exports it). */
export function packageVersion(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version ?? '?';
    }
    if (dirname(dir) === dir) return '?';
    dir = dirname(dir);
  }
}

/** A line about the program (its driver's version), printed once and not compared. */
export function meta(text: string): void {
  process.stdout.write(`@${text}\n`);
}

export function emit(op: string, value: string): void {
  process.stdout.write(`${op}\t${value.replace(/[\r\n\t]+/g, ' ')}\n`);
}

/** A stable text for any result value. */
export function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === 'bigint') return x.toString();
    if (x instanceof Date) return x.toISOString();
    if (x && typeof x === 'object' && (x as { type?: unknown }).type === 'Buffer')
      return `\\x${Buffer.from((x as { data: number[] }).data).toString('hex')}`;
    return x;
  });
}

/** The SQLSTATE of a server error, or `client:<kind>` for an error the driver made itself. */
export function sqlstate(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  const name = (e as { name?: unknown } | null)?.name;
  return `client:${typeof name === 'string' ? name : 'error'}${typeof code === 'string' ? `:${code}` : ''}`;
}

/** Runs one operation and prints its line; `recover` brings the connection back to idle after a failure. */
export async function step(
  op: string,
  fn: () => Promise<unknown>,
  recover: () => Promise<void>,
): Promise<void> {
  try {
    const v = await fn();
    emit(op, typeof v === 'string' ? v : show(v));
  } catch (e) {
    emit(op, `ERROR ${sqlstate(e)}`);
    process.stderr.write(`${op}: ${(e as Error)?.message ?? String(e)}\n`);
    await recover();
  }
}

/** The SQLSTATE an operation that is expected to fail failed with, as a result (`caught X`). */
export async function caught(fn: () => Promise<unknown>): Promise<string> {
  try {
    const v = await fn();
    return `no error: ${show(v)}`;
  } catch (e) {
    return `caught ${sqlstate(e)}`;
  }
}

/**
 * Every task of a concurrent operation runs to its end, each giving its value or `ERROR <SQLSTATE>`:
 * the first failure does not leave the others running while the program moves on.
 */
export function settle<T>(tasks: readonly Promise<T>[]): Promise<(T | string)[]> {
  return Promise.all(
    tasks.map((t) =>
      t.then(
        (v) => v,
        (e: unknown) => `ERROR ${sqlstate(e)}`,
      ),
    ),
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
