// What the numbers were measured on, recorded with every result: without it a benchmark cannot be
// compared with a rerun elsewhere.
import { execFileSync } from 'node:child_process';
import { cpus, totalmem, release } from 'node:os';
import { join } from 'node:path';
import { findPgBinDir } from '@tessera/pgctl';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  postgres: string;
  pgbench: string;
  pgbouncer?: string | undefined;
  gitCommit: string;
  gitDirty: boolean;
}

function quiet(cmd: string, args: string[], cwd?: string): string {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      ...(cwd ? { cwd } : {}),
    }).trim();
  } catch {
    return 'unknown';
  }
}

export function machineInfo(repoRoot: string, pgbouncerBin?: string): MachineInfo {
  const bin = findPgBinDir();
  const status = quiet('git', ['status', '--porcelain'], repoRoot);
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    postgres: quiet(join(bin, 'postgres'), ['--version']),
    pgbench: quiet(join(bin, 'pgbench'), ['--version']),
    pgbouncer: pgbouncerBin ? quiet(pgbouncerBin, ['--version']).split('\n')[0] : undefined,
    gitCommit: quiet('git', ['rev-parse', 'HEAD'], repoRoot),
    gitDirty: status !== '' && status !== 'unknown',
  };
}

const RECORDED_SETTINGS = [
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'wal_level',
  'shared_buffers',
  'max_connections',
  'max_prepared_transactions',
];

/** The server settings that move benchmark numbers, as the server reports them. */
export async function postgresSettings(server: {
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}): Promise<Record<string, string>> {
  const rows = await server.query(
    `select name, setting, unit from pg_settings where name = any($1) order by name`,
    [RECORDED_SETTINGS],
  );
  const out: Record<string, string> = {};
  for (const r of rows)
    out[String(r['name'])] = `${String(r['setting'])}${r['unit'] ? ` ${String(r['unit'])}` : ''}`;
  return out;
}
