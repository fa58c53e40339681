// Copying definitions from one node to another with the Postgres tools themselves: pg_dump
// --schema-only (tables with their indexes, constraints, owned sequences, defaults) applied on
// the other node. Used when a move's target lacks a table of the keyspace, and by `tessera nodes
// add` for a new node's whole schema.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { findPgBinDir } from '@tessera/pgctl';
import type pg from 'pg';
import { JobFailed } from '../errors.js';
import { ident, type NodeAddr, type NodeAuth } from '../nodes/sessions.js';

export interface DumpOptions {
  /** Only these tables (with what pg_dump brings along: indexes, owned sequences). */
  tables?: readonly { schema: string; name: string }[];
  /** Schemas left out of a whole-database dump. */
  excludeSchemas?: readonly string[];
  /** Tables left out of a whole-database dump (their definitions too). */
  excludeTables?: readonly { schema: string; name: string }[];
}

const pattern = (schema: string, name: string) =>
  `"${schema.replace(/"/g, '""')}"."${name.replace(/"/g, '""')}"`;

/** Runs pg_dump --schema-only against `node` and resolves with its SQL. */
export function dumpSchema(
  auth: NodeAuth,
  node: NodeAddr,
  database: string,
  opts: DumpOptions = {},
): Promise<string> {
  const args = [
    '--schema-only',
    '--no-publications',
    '--no-subscriptions',
    '--no-comments',
    '-h',
    node.host,
    '-p',
    String(node.port),
    '-U',
    auth.user,
    '-d',
    database,
  ];
  for (const t of opts.tables ?? []) args.push('-t', pattern(t.schema, t.name));
  for (const s of opts.excludeSchemas ?? []) args.push('-N', `"${s.replace(/"/g, '""')}"`);
  for (const t of opts.excludeTables ?? []) args.push('-T', pattern(t.schema, t.name));
  const env = { ...process.env, PGCONNECT_TIMEOUT: '10' } as NodeJS.ProcessEnv;
  if (auth.password !== undefined) env['PGPASSWORD'] = auth.password;
  return new Promise((resolve, reject) => {
    const child = spawn(join(findPgBinDir(), 'pg_dump'), args, {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else
        reject(
          new JobFailed(
            `pg_dump of database ${database} on ${node.name} failed: ${Buffer.concat(err).toString('utf8').trim().split('\n').slice(-2).join(' ')}`,
          ),
        );
    });
  });
}

/** Applies pg_dump's SQL on a session (its psql-only lines dropped). */
export async function applyDump(c: pg.ClientBase, sql: string): Promise<void> {
  const body = sql
    .split('\n')
    .filter((l) => !l.startsWith('\\'))
    .join('\n');
  await c.query(body);
  // pg_dump empties search_path for the session; give the session its default back.
  await c.query('reset search_path');
}

/** Copies the definitions of `tables` (schemas created as needed) from `from` to a session on the target. */
export async function copyTableDefinitions(
  auth: NodeAuth,
  from: NodeAddr,
  target: pg.ClientBase,
  database: string,
  tables: readonly { schema: string; name: string }[],
): Promise<void> {
  if (tables.length === 0) return;
  for (const schema of new Set(tables.map((t) => t.schema)))
    await target.query(`create schema if not exists ${ident(schema)}`);
  await applyDump(target, await dumpSchema(auth, from, database, { tables }));
}
