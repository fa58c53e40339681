// The catalog database's URL, which may name several servers the way libpq does
// (`postgresql://user@h1:5432,h2:5432/tessera`): the home node's primary and its replicas. The
// coordinator connects to the one that is a primary (the highest timeline if several claim to be),
// so it follows the catalog when the home node fails over.
import { formatAddress, parseAddress } from '@tessera/proto';

export interface CatalogTarget {
  /** host:port of every server the URL names, in order. */
  readonly hosts: readonly string[];
  /** The URL with only `host` in it (what node-postgres takes). */
  urlFor(host: string): string;
}

const SHAPE = /^(postgres(?:ql)?:\/\/)((?:[^@/?#]*@)?)([^/?#]*)(.*)$/i;

/** Throws an Error with a sentence when the URL is not postgres:// with at least one host. */
export function parseCatalogUrl(url: string): CatalogTarget {
  const m = SHAPE.exec(url.trim());
  if (!m) throw new Error('expected postgres://user@host:port/db');
  const [, scheme = '', auth = '', hostList = '', rest = ''] = m;
  const hosts: string[] = [];
  for (const part of hostList.split(',')) {
    const h = part.trim();
    if (h === '') continue;
    let hp;
    try {
      hp = parseAddress(/:\d+$/.test(h) && !h.endsWith(']') ? h : `${h}:5432`);
    } catch {
      throw new Error(`"${h}" is not a host or host:port`);
    }
    hosts.push(formatAddress(hp.host, hp.port));
  }
  if (hosts.length === 0) throw new Error('the URL names no host');
  const urlFor = (host: string): string => `${scheme}${auth}${host}${rest}`;
  // Whatever else is wrong with it (a bad port, bad escapes) shows on the single-host form.
  new URL(urlFor(hosts[0]!));
  return { hosts, urlFor };
}

/** Candidates in order: `preferred` (from the catalog: home's primary, then its replicas) first. */
export function candidateHosts(target: CatalogTarget, preferred: readonly string[]): string[] {
  const out: string[] = [];
  for (const h of [...preferred, ...target.hosts]) if (!out.includes(h)) out.push(h);
  return out;
}
