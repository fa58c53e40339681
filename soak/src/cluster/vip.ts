// The coordinators' one address for routers: a TCP proxy in the harness that forwards every new
// connection to the active coordinator (the one whose GetCatalog answers; a standby answers
// UNAVAILABLE) and drops the connections to one that stopped being active, so the routers'
// gRPC channels reconnect and reach the new one. The router takes a single --coordinator
// address today (DESIGN.md section 7 wants a list); this plays the load balancer in front.
import { CatalogService, createClient, type Client, type ClientOptions } from '@tessera/proto';
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
  #polling: Promise<void> | undefined;
  readonly #clients = new Map<string, Client<typeof CatalogService>>();
  readonly #bases: Client<typeof CatalogService>[] = [];

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
    // A poll already under way answers for this one too.
    if (this.#polling) return this.#polling;
    this.#polling = this.#poll();
    try {
      await this.#polling;
    } finally {
      this.#polling = undefined;
    }
  }

  async #poll(): Promise<void> {
    const up: boolean[] = await Promise.all(this.members.map((m) => this.#isActive(m)));
    const active = this.members.find((_, i) => up[i]);
    if (active?.name !== this.#leader?.name) {
      this.#leader = active;
      if (active) {
        this.#last = active;
        this.proxy.cutExcept({ host: active.host, port: active.port });
      }
      this.onLeader(active?.name);
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
    for (const c of this.#clients.values()) c.close();
    for (const b of this.#bases) b.close();
    await this.proxy.close();
  }

  /** One channel per coordinator, reconnecting quickly after a kill (grpc-js's default waits up to 2 min). */
  async #isActive(m: VipMember): Promise<boolean> {
    let client = this.#clients.get(m.name);
    if (!client) {
      // Its own channel to this one coordinator, given to a second client as a fixed channel:
      // a client with an address list of its own would follow a standby's hint to the active
      // coordinator, and this standby would look active.
      const base = createClient(CatalogService, `${m.host}:${m.port}`, {
        channelOptions: {
          'grpc.initial_reconnect_backoff_ms': 100,
          'grpc.max_reconnect_backoff_ms': 500,
        },
      });
      this.#bases.push(base);
      client = createClient(CatalogService, `${m.host}:${m.port}`, {
        token: this.token,
        deadlineMs: 1000,
        channel: base.grpcClient.getChannel() as unknown as ClientOptions['channel'],
      });
      this.#clients.set(m.name, client);
    }
    try {
      await client.getCatalog({});
      return true;
    } catch {
      return false;
    }
  }
}
