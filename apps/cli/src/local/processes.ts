// Telling whether a recorded process is still the one we started, and ending it. A pid alone can
// be reused by an unrelated process after a reboot or a long time; the start time from /proc
// tells them apart (where there is no /proc, a live pid is trusted).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '@tessera/pgctl';
import { readStateFile, readSupervisorPid, type Layout, type ProcessRecord } from './layout.js';

/** Clock ticks since boot at which `pid` started (field 22 of /proc/PID/stat), if readable. */
export function startTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

export function recordOf(pid: number): ProcessRecord {
  const ticks = startTicks(pid);
  return ticks === undefined ? { pid } : { pid, startTicks: ticks };
}

/** Alive and, where we can tell, the same process that was recorded. */
export function isSameProcess(rec: ProcessRecord): boolean {
  if (!isAlive(rec.pid)) return false;
  if (rec.startTicks === undefined) return true;
  const now = startTicks(rec.pid);
  return now === undefined || now === rec.startTicks;
}

/** Whether a pid has become a zombie (exited, waiting for its parent to reap it). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Alive in the sense that matters for waiting: running, not a zombie. */
export function isRunning(pid: number): boolean {
  return isAlive(pid) && !isZombie(pid);
}

/** Waits until `pid` is gone (or a zombie); false on timeout. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** Signals the whole process group of a detached child (it and anything it spawned). */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the leader is gone. */
export async function terminateGroup(pid: number, graceMs: number): Promise<void> {
  killGroup(pid, 'SIGTERM');
  if (await waitForExit(pid, graceMs)) return;
  killGroup(pid, 'SIGKILL');
  await waitForExit(pid, 5_000);
}

/** The environment for processes we start: ours, minus what only made sense for our own. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  // Set by `node --test` for the processes it starts; a service must not think it is a test file.
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** The pid of the supervisor running for this directory, if one is. */
export function liveSupervisorPid(l: Layout): number | undefined {
  const pid = readSupervisorPid(l);
  if (pid === undefined || !isRunning(pid)) return undefined;
  const rec = readStateFile(l)?.supervisor;
  if (rec && rec.pid === pid && !isSameProcess(rec)) return undefined;
  return pid;
}
