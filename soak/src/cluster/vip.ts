// The coordinators' one address for routers: a TCP proxy in the harness that forwards every new
// connection to the active coordinator (the one whose GetCatalog answers; a standby answers
// UNAVAILABLE) and drops the connections to one that stopped being active, so the routers'
// gRPC channels reconnect and reach the new one. The router takes a single --coordinator
// address today (DESIGN.md section 7 wants a list); this plays the load balancer in front.
import { CatalogService, createClient } from '@tessera/proto';
import { TcpProxy, type Target } from '../net/tcp-proxy.js';

export interface VipMember {
  name: string;
  host: string;
  port: number;
}

export class CoordinatorVip {
  readonly proxy: TcpProxy;
  #leader: VipMember | undefined;
  #last: VipMember | undefined;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #waiters: (() => void)[] = [];

  constructor(
    readonly members: readonly VipMember[],
    readonly token: string,
    /** Told each time the active coordinator changes (undefined: none is active). */
    readonly onLeader: (leader: string | undefined) => void,
  ) {
    this.proxy = new TcpProxy(() => this.#target());
  }

  get leader(): string | undefined {
    return this.#leader?.name;
  }

  #target(): Target | undefined {
    const m = this.#leader ?? this.#last;
    return m ? { host: m.host, port: m.port } : undefined;
  }

  async listen(host: string, port: number): Promise<number> {
    const bound = await this.proxy.listen(host, port);
    this.#timer = setInterval(() => void this.poll(), 250);
    this.#timer.unref();
    return bound;
  }

  /** Asks every coordinator who is active; acts on a change. */
  async poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const up: boolean[] = await Promise.all(this.members.map((m) => isActive(m, this.token)));
      const active = this.members.find((_, i) => up[i]);
      if (active?.name !== this.#leader?.name) {
        this.#leader = active;
        if (active) {
          this.#last = active;
          this.proxy.cutExcept({ host: active.host, port: active.port });
        }
        this.onLeader(active?.name);
      }
      if (active) for (const w of this.#waiters.splice(0)) w();
    } finally {
      this.#polling = false;
    }
  }

  /** Resolves once some coordinator is active. */
  async waitForLeader(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      await this.poll();
      if (this.#leader) return this.#leader.name;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no coordinator became active within ${timeoutMs} ms`);
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.proxy.close();
  }
}

async function isActive(m: VipMember, token: string): Promise<boolean> {
  const client = createClient(CatalogService, `${m.host}:${m.port}`, { token, deadlineMs: 1000 });
  try {
    await client.getCatalog({});
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}
