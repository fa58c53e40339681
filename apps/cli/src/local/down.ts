// `tessera down`: stop what `up` started for a directory (supervisor, then whatever it left:
// services, Postgres nodes) and wait until every process is gone.
import { existsSync, rmSync } from 'node:fs';
import type { Io } from '../io.js';
import { layout, readStateFile } from './layout.js';
import { stopNodes } from './postgres-nodes.js';
import {
  isSameProcess,
  killGroup,
  liveSupervisorPid,
  terminateGroup,
  waitForExit,
} from './processes.js';

/** The supervisor stops services (10 s grace each) and nodes (fast shutdown) before it exits. */
const SUPERVISOR_GRACE_MS = 45_000;

export async function down(dir: string, io: Io): Promise<number> {
  const l = layout(dir);
  if (!existsSync(l.dir)) {
    io.out(`nothing is running: there is no local cluster in ${l.dir}\n`);
    return 0;
  }
  const state = readStateFile(l);
  const stopped: string[] = [];

  const pid = liveSupervisorPid(l);
  if (pid !== undefined) {
    process.kill(pid, 'SIGTERM');
    if (!(await waitForExit(pid, SUPERVISOR_GRACE_MS))) {
      io.err(
        `the supervisor (pid ${pid}) did not stop within ${SUPERVISOR_GRACE_MS / 1000} s; killing it\n`,
      );
      killGroup(pid, 'SIGKILL');
      await waitForExit(pid, 5_000);
    }
    stopped.push(
      'supervisor',
      ...Object.keys(state?.services ?? {}),
      ...Object.keys(state?.nodes ?? {}),
    );
  }

  // Whatever a supervisor that was killed (or crashed) left behind.
  for (const [name, rec] of Object.entries(readStateFile(l)?.services ?? {})) {
    if (!isSameProcess(rec)) continue;
    await terminateGroup(rec.pid, 10_000);
    if (!stopped.includes(name)) stopped.push(name);
  }
  for (const name of await stopNodes(l)) if (!stopped.includes(name)) stopped.push(name);

  rmSync(l.stateFile, { force: true });
  rmSync(l.pidFile, { force: true });
  io.out(
    stopped.length === 0
      ? `nothing is running in ${l.dir}\n`
      : `stopped the local cluster in ${l.dir} (${stopped.join(', ')})\n`,
  );
  return 0;
}
