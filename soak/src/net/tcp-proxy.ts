// A small TCP proxy: forwards each accepted connection to a target, and on the connections of
// chosen peers adds delay, jitter and "loss". TCP never loses bytes, so loss here is what a lost
// segment costs an application: a retransmission stall (stallMs, the usual minimum RTO) on that
// chunk and everything queued behind it. `tc netem` is not available on the CI kernel; this is
// the harness's replacement (docs/soak.md, "Delay and loss").
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface LinkRule {
  /** Remote addresses of the connections it applies to; every connection when absent. */
  sources?: string[] | undefined;
  delayMs: number;
  jitterMs: number;
  /** Probability per chunk of a retransmission stall. */
  loss: number;
  stallMs: number;
}

export interface Target {
  host: string;
  port: number;
}

interface Direction {
  from: Socket;
  to: Socket;
  queue: { chunk: Buffer; at: number }[];
  lastAt: number;
  timer: NodeJS.Timeout | undefined;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  target: Target;
  remote: string;
}

/** Above this many queued bytes a direction stops reading its source until it drains. */
const HIGH_WATER = 1 << 20;

export class TcpProxy {
  #server: Server | undefined;
  #rules: LinkRule[] = [];
  readonly #pairs = new Set<Pair>();

  /** `target()` is asked for every new connection; undefined refuses it (closed at once). */
  constructor(readonly target: () => Target | undefined) {}

  listen(host: string, port: number): Promise<number> {
    const server = createServer((client) => this.#accept(client));
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        const a = server.address();
        resolve(typeof a === 'object' && a ? a.port : port);
      });
    });
  }

  setRules(rules: LinkRule[]): void {
    this.#rules = rules;
  }

  /** Drops every connection whose target is not `keep` (a coordinator that stopped leading). */
  cutExcept(keep: Target | undefined): number {
    let n = 0;
    for (const p of this.#pairs) {
      if (keep && p.target.host === keep.host && p.target.port === keep.port) continue;
      p.client.destroy();
      p.upstream.destroy();
      n++;
    }
    return n;
  }

  get connections(): number {
    return this.#pairs.size;
  }

  close(): Promise<void> {
    this.cutExcept(undefined);
    return new Promise((resolve) =>
      this.#server ? this.#server.close(() => resolve()) : resolve(),
    );
  }

  #ruleFor(remote: string): LinkRule | undefined {
    return this.#rules.find((r) => !r.sources || r.sources.includes(remote));
  }

  #accept(client: Socket): void {
    const target = this.target();
    client.on('error', () => {});
    if (!target) {
      client.destroy();
      return;
    }
    const remote = (client.remoteAddress ?? '').replace(/^::ffff:/, '');
    const upstream = connect({ host: target.host, port: target.port });
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    upstream.on('error', () => {});
    const pair: Pair = { client, upstream, target, remote };
    this.#pairs.add(pair);
    const end = (): void => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
    this.#pump({ from: client, to: upstream, queue: [], lastAt: 0, timer: undefined }, remote);
    this.#pump({ from: upstream, to: client, queue: [], lastAt: 0, timer: undefined }, remote);
  }

  #pump(d: Direction, remote: string): void {
    let queued = 0;
    const flush = (): void => {
      d.timer = undefined;
      const now = Date.now();
      while (d.queue.length > 0 && d.queue[0]!.at <= now) {
        const { chunk } = d.queue.shift()!;
        queued -= chunk.length;
        if (!d.to.destroyed) d.to.write(chunk);
      }
      if (queued < HIGH_WATER && d.from.isPaused()) d.from.resume();
      if (d.queue.length > 0) d.timer = setTimeout(flush, Math.max(0, d.queue[0]!.at - now));
    };
    d.from.on('data', (chunk: Buffer) => {
      const rule = this.#ruleFor(remote);
      if (!rule && d.queue.length === 0) {
        if (!d.to.write(chunk)) {
          d.from.pause();
          d.to.once('drain', () => d.from.resume());
        }
        return;
      }
      const now = Date.now();
      let at = now;
      if (rule) {
        at += rule.delayMs + Math.random() * rule.jitterMs;
        if (Math.random() < rule.loss) at += rule.stallMs;
      }
      // TCP delivers in order: a chunk never overtakes the one before it.
      at = Math.max(at, d.lastAt);
      d.lastAt = at;
      d.queue.push({ chunk, at });
      queued += chunk.length;
      if (queued >= HIGH_WATER) d.from.pause();
      if (!d.timer) d.timer = setTimeout(flush, Math.max(0, d.queue[0]!.at - now));
    });
    d.from.on('end', () => {
      const finish = (): void => {
        if (d.queue.length > 0) setTimeout(finish, 5);
        else d.to.end();
      };
      finish();
    });
  }
}
