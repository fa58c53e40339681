// Creating, partitioning and deleting the soak's network namespaces with `ip` (iproute2). Needs
// root; netnsSupport() says why not otherwise, and the run falls back to loopback.
import { execFileSync, spawn } from 'node:child_process';
import { isAlive } from '@tessera/pgctl';
import {
  NS_PREFIX,
  healBatch,
  parseNamespaceName,
  partitionBatch,
  setupBatches,
  type IpBatch,
  type Topology,
} from './topology.js';

export type Support = { ok: true } | { ok: false; reason: string };

/** Whether this process can make network namespaces (tried for real, then removed). */
export function netnsSupport(): Support {
  if (process.platform !== 'linux') return { ok: false, reason: 'network namespaces need Linux' };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0)
    return { ok: false, reason: 'network namespaces need root (this run is not root)' };
  const probe = `${NS_PREFIX}0-${process.pid}-probe`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'pipe' });
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: `ip netns add failed: ${firstLine(e)}` };
  }
}

function listNamespaces(): string[] {
  try {
    return execFileSync('ip', ['netns', 'list'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .map((l) => l.split(' ')[0]!.trim())
      .filter((n) => n.startsWith(NS_PREFIX));
  } catch {
    return [];
  }
}

/**
 * Deletes the namespaces of soak runs that died without cleaning up, and kills what still runs in
 * them; returns the subnets of live runs.
 */
export function sweepStaleNamespaces(): Set<number> {
  const live = new Set<number>();
  for (const ns of listNamespaces()) {
    const p = parseNamespaceName(ns);
    if (p && p.owner !== process.pid && isAlive(p.owner)) {
      live.add(p.subnet);
      continue;
    }
    if (p && p.owner === process.pid) {
      live.add(p.subnet);
      continue;
    }
    // Whatever that run left running inside (servers, routers, coordinators, proxies) goes too.
    try {
      const pids = execFileSync('ip', ['netns', 'pids', ns], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      for (const pid of pids.split('\n').filter(Boolean).map(Number)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      execFileSync('ip', ['netns', 'del', ns], { stdio: 'pipe' });
    } catch {
      // already gone
    }
  }
  return live;
}

/** The namespaces and links of one topology, for the life of a run. */
export class Network {
  #up = false;

  constructor(readonly topology: Topology) {}

  /** Creates every namespace, link, address and route. */
  async up(): Promise<void> {
    process.once('exit', () => this.downSync());
    this.#up = true;
    for (const m of this.topology.members) await run(['netns', 'add', m.ns]);
    for (const b of setupBatches(this.topology)) await batch(b);
  }

  async partition(member: string, peers: readonly string[]): Promise<void> {
    await batch(partitionBatch(this.topology, member, peers));
  }

  async heal(member: string, peers: readonly string[]): Promise<void> {
    await batch(healBatch(this.topology, member, peers));
  }

  /** Deletes the namespaces (their veth pairs go with them). Processes inside must be gone first. */
  downSync(): void {
    if (!this.#up) return;
    this.#up = false;
    for (const m of this.topology.members) {
      try {
        execFileSync('ip', ['netns', 'del', m.ns], { stdio: 'pipe' });
      } catch {
        // already gone
      }
    }
  }
}

/** Arguments that run `command` inside a member's namespace (nsenter execs it in place). */
export function inNamespace(
  ns: string | undefined,
  command: string,
  args: readonly string[],
): [string, string[]] {
  if (ns === undefined) return [command, [...args]];
  return ['nsenter', [`--net=/run/netns/${ns}`, '--', command, ...args]];
}

function batch(b: IpBatch): Promise<void> {
  if (b.lines.length === 0) return Promise.resolve();
  return run([...(b.ns ? ['-n', b.ns] : []), '-batch', '-'], `${b.lines.join('\n')}\n`);
}

function run(args: string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', args, {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`ip ${args.join(' ')} failed (${code}): ${err.trim()}`)),
    );
    if (child.stdin) {
      child.stdin.on('error', () => {}); // the exit code says what went wrong
      child.stdin.end(input);
    }
  });
}

function firstLine(e: unknown): string {
  const err = e as { stderr?: Buffer | string; message?: string };
  const text = err.stderr ? err.stderr.toString() : (err.message ?? String(e));
  return text.split('\n')[0]!.trim();
}
