// psql as a child process: its `\copy` streams a file through any server or proxy with COPY FROM
// STDIN, which the `pg` driver cannot do without another package.
import { join } from 'node:path';
import { findPgBinDir } from '@tessera/pgctl';
import { runProcess } from './processes.js';

export interface PsqlEndpoint {
  host: string;
  port: number;
}

/**
 * Runs one psql command (SQL or a backslash command) and stops at the first error; throws with
 * psql's message, SQLSTATE included (VERBOSITY=verbose), when it fails.
 */
export async function psqlCommand(
  at: PsqlEndpoint,
  command: string,
  timeoutMs = 600_000,
): Promise<void> {
  const r = await runProcess(
    join(findPgBinDir(), 'psql'),
    [
      '-X',
      '-q',
      '-h',
      at.host,
      '-p',
      String(at.port),
      '-U',
      'postgres',
      '-d',
      'postgres',
      '-v',
      'ON_ERROR_STOP=1',
      '-v',
      'VERBOSITY=verbose',
      '-c',
      command,
    ],
    { timeoutMs, env: { ...process.env, PGCONNECT_TIMEOUT: '15' } },
  );
  if (r.timedOut) throw new Error(`psql did not finish within ${timeoutMs / 1000} s`);
  if (r.code !== 0) {
    const why = (r.stderr || r.stdout).trim().split('\n').slice(0, 3).join(' | ');
    throw new Error(`psql exited ${r.code}: ${why || 'no output'}`);
  }
}
