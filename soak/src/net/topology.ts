// The soak's network on one machine (docs/soak.md, "Network"): every member (Postgres instance,
// coordinator, router) in a Linux network namespace of its own with one address, 10.213.S.N/32
// on its loopback device, and a point-to-point veth link to each peer it talks to: the harness
// in the root namespace (10.213.S.1), and, for every pair that includes a node, the other member.
// A partition is then "this link down", per peer, so a node can be cut off from the coordinators
// only, from the routers only, or from everyone. Pure: names, addresses and `ip` commands.

export type MemberKind = 'node' | 'coordinator' | 'router' | 'mover';

export interface MemberSpec {
  name: string;
  kind: MemberKind;
}

export interface Member extends MemberSpec {
  /** Network namespace name. */
  ns: string;
  address: string;
}

/** A veth pair; `a` may be 'root' (the harness's namespace). */
export interface Link {
  a: string;
  b: string;
  /** Interface names at each end (each in its own namespace). */
  ifA: string;
  ifB: string;
}

export interface Topology {
  subnet: number;
  owner: number;
  rootAddress: string;
  members: Member[];
  links: Link[];
}

export const NS_PREFIX = 'tsoak-';
export const ROOT = 'root';

/** `tsoak-<subnet>-<owner pid>-<member>`: a later run removes the namespaces of dead owners. */
export function namespaceName(subnet: number, owner: number, member: string): string {
  return `${NS_PREFIX}${subnet}-${owner}-${member}`;
}

export function parseNamespaceName(
  ns: string,
): { subnet: number; owner: number; member: string } | undefined {
  const m = /^tsoak-(\d+)-(\d+)-(.+)$/.exec(ns);
  if (!m) return undefined;
  return { subnet: Number(m[1]), owner: Number(m[2]), member: m[3]! };
}

/** A subnet number (1..250) no live run uses; prefers one derived from the owner's pid. */
export function pickSubnet(owner: number, inUse: ReadonlySet<number>): number {
  for (let i = 0; i < 250; i++) {
    const s = ((owner + i) % 250) + 1;
    if (!inUse.has(s)) return s;
  }
  throw new Error('every soak subnet (10.213.1-250.0/24) is in use by a running soak');
}

const isNode = (m: MemberSpec): boolean => m.kind === 'node';

export function planTopology(
  specs: readonly MemberSpec[],
  subnet: number,
  owner: number,
): Topology {
  if (specs.length > 240) throw new Error('at most 240 members per soak cluster');
  const names = new Set<string>();
  for (const s of specs) {
    if (!/^[a-z][a-z0-9]{0,12}$/.test(s.name))
      throw new Error(`member name "${s.name}" must be short lowercase letters and digits`);
    if (names.has(s.name)) throw new Error(`member name "${s.name}" is used twice`);
    names.add(s.name);
  }
  const members = specs.map((s, i) => ({
    ...s,
    ns: namespaceName(subnet, owner, s.name),
    address: `10.213.${subnet}.${10 + i}`,
  }));
  const links: Link[] = members.map((m, i) => ({
    a: ROOT,
    b: m.name,
    ifA: `ts${subnet}m${i}`,
    ifB: peerInterface(ROOT),
  }));
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      const a = members[i]!;
      const b = members[j]!;
      if (!isNode(a) && !isNode(b)) continue;
      links.push({ a: a.name, b: b.name, ifA: peerInterface(b.name), ifB: peerInterface(a.name) });
    }
  }
  return { subnet, owner, rootAddress: `10.213.${subnet}.1`, members, links };
}

/** The name, inside a member's namespace, of its link to `peer`. */
export function peerInterface(peer: string): string {
  return `t-${peer}`;
}

/** One `ip -batch` script, run in a namespace (undefined: the root namespace). */
export interface IpBatch {
  ns: string | undefined;
  lines: string[];
}

export function setupBatches(t: Topology): IpBatch[] {
  const byName = new Map(t.members.map((m) => [m.name, m]));
  const nsOf = (name: string): string | undefined =>
    name === ROOT ? undefined : byName.get(name)!.ns;
  const addrOf = (name: string): string =>
    name === ROOT ? t.rootAddress : byName.get(name)!.address;
  const root: string[] = [];
  for (const l of t.links) {
    const a = nsOf(l.a);
    root.push(
      `link add name ${l.ifA}${a ? ` netns ${a}` : ''} type veth peer name ${l.ifB} netns ${nsOf(l.b)!}`,
    );
  }
  const batches: IpBatch[] = [{ ns: undefined, lines: root }];
  const ends = new Map<string | undefined, string[]>();
  const add = (ns: string | undefined, line: string): void => {
    const list = ends.get(ns) ?? [];
    list.push(line);
    ends.set(ns, list);
  };
  for (const m of t.members) {
    add(m.ns, 'link set lo up');
    add(m.ns, `addr add ${m.address}/32 dev lo`);
  }
  for (const l of t.links) {
    for (const [me, peer, dev] of [
      [l.a, l.b, l.ifA],
      [l.b, l.a, l.ifB],
    ] as const) {
      const ns = nsOf(me);
      if (me === ROOT) add(ns, `addr add ${t.rootAddress}/32 dev ${dev}`);
      add(ns, `link set ${dev} up`);
      add(ns, `route add ${addrOf(peer)}/32 dev ${dev} src ${addrOf(me)}`);
    }
  }
  for (const [ns, lines] of ends) batches.push({ ns, lines });
  return batches;
}

/** Takes the member's end of its links to `peers` down (its side: packets to them are unroutable). */
export function partitionBatch(t: Topology, member: string, peers: readonly string[]): IpBatch {
  const m = t.members.find((x) => x.name === member);
  if (!m) throw new Error(`no member ${member}`);
  return { ns: m.ns, lines: peers.map((p) => `link set ${peerInterface(p)} down`) };
}

/** Brings the links up again and puts back the routes that going down removed. */
export function healBatch(t: Topology, member: string, peers: readonly string[]): IpBatch {
  const m = t.members.find((x) => x.name === member);
  if (!m) throw new Error(`no member ${member}`);
  const addrOf = (name: string): string =>
    name === ROOT ? t.rootAddress : t.members.find((x) => x.name === name)!.address;
  return {
    ns: m.ns,
    lines: peers.flatMap((p) => [
      `link set ${peerInterface(p)} up`,
      `route replace ${addrOf(p)}/32 dev ${peerInterface(p)} src ${m.address}`,
    ]),
  };
}

/** The peers a member has a link to (root included). */
export function peersOf(t: Topology, member: string): string[] {
  return t.links.flatMap((l) => (l.a === member ? [l.b] : l.b === member ? [l.a] : []));
}
