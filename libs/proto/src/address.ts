// `host:port` parsing and the loopback test the coordinator uses to decide whether admin calls
// need a bearer token (DESIGN.md section 8).
import { isIPv4, isIPv6 } from 'node:net';

export interface HostPort {
  host: string;
  port: number;
}

/**
 * Parses `host:port`, `[v6]:port` (the host comes back without brackets). Throws an Error with a
 * sentence naming the bad input when there is no port or it is not 0..65535.
 */
export function parseAddress(addr: string): HostPort {
  const text = addr.trim();
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') throw badAddress(addr);
    host = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0 || text.indexOf(':') !== colon) throw badAddress(addr);
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  if (host === '' || !/^\d{1,5}$/.test(portText)) throw badAddress(addr);
  const port = Number(portText);
  if (port > 65535) throw badAddress(addr);
  return { host, port };
}

/** Formats a host and port back into an address grpc-js accepts (`[::1]:50051`). */
export function formatAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** True for `localhost`, 127.0.0.0/8, `::1` (also written long or bracketed) and `::ffff:127.x.y.z`. */
export function isLoopback(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIPv4(h)) return h.startsWith('127.');
  if (!isIPv6(h)) return false;
  if (h.startsWith('::ffff:')) {
    const v4 = h.slice('::ffff:'.length);
    return isIPv4(v4) && v4.startsWith('127.');
  }
  return expandIPv6(h) === '0000:0000:0000:0000:0000:0000:0000:0001';
}

function expandIPv6(h: string): string {
  const [head = '', tail = ''] = h.split('::', 2);
  const left = head === '' ? [] : head.split(':');
  const right = h.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const zeros = Array<string>(8 - left.length - right.length).fill('0');
  const groups = h.includes('::') ? [...left, ...zeros, ...right] : left;
  return groups.map((g) => g.padStart(4, '0')).join(':');
}

function badAddress(addr: string): Error {
  return new Error(
    `"${addr}" is not an address of the form host:port (or [ipv6]:port) with a port 0..65535`,
  );
}

/**
 * Parses a comma-separated list of `host:port` addresses (`--coordinator a:7400,b:7400`), each
 * checked by parseAddress, duplicates dropped, order kept. Throws an Error naming the bad entry.
 */
export function parseAddressList(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',')) {
    const a = part.trim();
    if (a === '') continue;
    parseAddress(a);
    if (!out.includes(a)) out.push(a);
  }
  if (out.length === 0) throw new Error(`"${text}" holds no address of the form host:port`);
  return out;
}
