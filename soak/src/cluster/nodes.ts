// A node of the soak cluster as the catalog knows it: its Postgres instances (a primary and,
// when the plan asks, a streaming replica, each with its agent), and which of them is the
// primary now. That follows the catalog (after a failover, the promoted replica), so the faults
// and the final-state probe act on what the cluster routes to. The node's own methods act on its
// primary.
import type { Node } from '@tessera/proto';
import type { LinkRule } from '../net/tcp-proxy.js';
import type { Address, PgInstance } from './instance.js';

export type NodeRole = 'home' | 'data';
export type { Address } from './instance.js';
export { PG_PORT, PROXY_PORT, SOAK_NODE_SETTINGS } from './instance.js';

/** A replica's member name: `data1rep` for data1's (namespaces, logs). */
export const replicaMember = (node: string): string => `${node}rep`;

export class NodeMember {
  #primary: PgInstance;

  constructor(
    readonly name: string,
    readonly role: NodeRole,
    readonly instances: readonly PgInstance[],
  ) {
    this.#primary = instances[0]!;
  }

  /** The instance the catalog names as the node's primary (as of the last follow()). */
  get primary(): PgInstance {
    return this.#primary;
  }

  /** The instances that are not the primary (replicas, or a fenced former primary). */
  get others(): PgInstance[] {
    return this.instances.filter((i) => i !== this.#primary);
  }

  get replicated(): boolean {
    return this.instances.length > 1;
  }

  /** The instance at a catalog address (`host:port`). */
  instanceAt(address: string): PgInstance | undefined {
    return this.instances.find((i) => i.catalogKey === address);
  }

  /** Takes the primary from the catalog's record of this node; true when it changed. */
  follow(n: Pick<Node, 'host' | 'port'>): boolean {
    const at = this.instanceAt(`${n.host}:${n.port}`);
    if (!at || at === this.#primary) return false;
    this.#primary = at;
    return true;
  }

  get pg() {
    return this.#primary.pg;
  }

  get proxy() {
    return this.#primary.proxy;
  }

  get catalogAddress(): Address {
    return this.#primary.catalogAddress;
  }

  get direct(): Address {
    return this.#primary.direct;
  }

  get postmasterPid(): number | undefined {
    return this.#primary.postmasterPid;
  }

  pids(): number[] {
    return this.#primary.pids();
  }

  kill(): Promise<void> {
    return this.#primary.kill();
  }

  start(): Promise<void> {
    return this.#primary.start();
  }

  cleanRestart(): Promise<void> {
    return this.#primary.cleanRestart();
  }

  pause(): void {
    this.#primary.pause();
  }

  /** SIGCONT to whichever instance was paused (the primary may have changed since). */
  async resume(): Promise<void> {
    for (const i of this.instances) await i.resume();
  }

  get paused(): boolean {
    return this.instances.some((i) => i.paused);
  }

  setLinkRules(rules: LinkRule[]): Promise<void> {
    return this.#primary.setLinkRules(rules);
  }

  /** Clears the link rules of every instance (a fault's rules stay where they were set). */
  async clearLinkRules(): Promise<void> {
    for (const i of this.instances) if (i.proxy) await i.setLinkRules([]);
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.stop().catch(() => undefined)));
  }
}
