// Names of distributed transactions: the txid the decision log is keyed by, and the gid each node's
// prepared transaction carries, `tessera:<cluster-uid>:<txid>:<node>` (DESIGN.md section 5). The
// recovery loop finds a cluster's prepared transactions by that prefix and the log by the txid.
import { randomBytes } from 'node:crypto';

/** Postgres keeps a gid in 200 bytes including the terminating NUL. */
export const MAX_GID_BYTES = 199;

const SAFE = /^[A-Za-z0-9_-]+$/;

export interface ParsedGid {
  clusterUid: string;
  txid: string;
  node: string;
}

// A txid must never be reused, even after its log row is cleaned up: a late gid of an old
// transaction would otherwise be judged by a newer transaction's decision. Time + per-process
// random + counter makes a collision need the same router id, millisecond, random and counter.
const processSalt = randomBytes(4).toString('hex');
let counter = 0;

/**
 * A new, never-reused transaction id safe inside a gid ([A-Za-z0-9_-]):
 * `<router>-<ms since epoch, base 36>-<process salt>-<counter, base 36>`.
 */
export function newTxid(routerId = 'r'): string {
  const who = routerId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 32) || 'r';
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${who}-${Date.now().toString(36)}-${processSalt}-${counter.toString(36)}`;
}

/** True when `id` may be a txid (or cluster uid) inside a gid: non-empty, [A-Za-z0-9_-] only. */
export function isSafeId(id: string): boolean {
  return SAFE.test(id);
}

/** The gid of `txid`'s prepared transaction on `node`. Throws on ids that would break parsing. */
export function gidFor(clusterUid: string, txid: string, node: string): string {
  if (!isSafeId(clusterUid))
    throw new TypeError(`cluster uid "${clusterUid}" is not usable in a gid`);
  if (!isSafeId(txid)) throw new TypeError(`txid "${txid}" is not usable in a gid ([A-Za-z0-9_-])`);
  if (node === '' || node.includes('\0'))
    throw new TypeError(`node name "${node}" is not usable in a gid`);
  const gid = `tessera:${clusterUid}:${txid}:${node}`;
  if (Buffer.byteLength(gid, 'utf8') > MAX_GID_BYTES)
    throw new TypeError(
      `the gid for txid ${txid} on node ${node} is longer than ${MAX_GID_BYTES} bytes`,
    );
  return gid;
}

/** The parts of a Tessera gid, or undefined for any other gid (other software's, or malformed). */
export function parseGid(gid: string): ParsedGid | undefined {
  // The node name is last and may itself contain ':'; the uid and txid never do.
  const parts = gid.split(':');
  if (parts.length < 4 || parts[0] !== 'tessera') return undefined;
  const [, clusterUid = '', txid = ''] = parts;
  const node = parts.slice(3).join(':');
  if (!isSafeId(clusterUid) || !isSafeId(txid) || node === '') return undefined;
  return { clusterUid, txid, node };
}

/** `tessera:<cluster-uid>:` — every gid of the cluster starts with it. */
export function gidPrefix(clusterUid: string): string {
  return `tessera:${clusterUid}:`;
}
