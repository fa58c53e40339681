// CPU time and resident memory of a server process and its descendants, read from /proc: the
// proxy's own cost, independent of how busy the rest of the (shared) machine is.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let clockTicks: number | undefined;

/** Kernel clock ticks per second (`getconf CLK_TCK`), the unit of utime/stime in /proc/PID/stat. */
export function clkTck(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100; // Linux's USER_HZ almost everywhere
    }
  }
  return clockTicks;
}

interface Stat {
  ppid: number;
  ticks: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** `pid` and every process below it (a router with workers is a tree). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const st = readStat(Number(entry));
    if (!st) continue;
    const list = children.get(st.ppid) ?? [];
    list.push(Number(entry));
    children.set(st.ppid, list);
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** user+system CPU of the tree, in microseconds (resolution: one clock tick, 10 ms at 100 Hz). */
export function cpuMicros(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) ticks += readStat(p)?.ticks ?? 0;
  return (ticks * 1e6) / clkTck();
}

/** VmRSS of the tree in bytes (shared pages count once per process: an upper bound). */
export function rssBytes(pid: number): number {
  return rssBytesOf(processTree(pid));
}

/** VmRSS summed over these processes (a tree found once, for sampling it often and cheaply). */
export function rssBytesOf(pids: readonly number[]): number {
  let kb = 0;
  for (const p of pids) {
    try {
      const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // exited meanwhile
    }
  }
  return kb * 1024;
}
