// The local cluster's generated passwords, D/passwords.json (mode 0600): the `postgres`
// superuser's (what the router, coordinators, agents, mover and this CLI log in to the nodes with)
// and the sample `app` role's. Made on the first `up` of a cluster with passwords, reused after.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { CliError } from '../errors.js';
import type { ClusterFile, Layout } from './layout.js';

export interface ClusterPasswords {
  /** The `postgres` superuser's on every node. */
  postgres: string;
  /** The sample role `app`'s. */
  app: string;
}

/** 24 URL- and conninfo-safe characters (base64url of 18 random bytes). */
const generate = (): string => randomBytes(18).toString('base64url');

function isPasswords(v: unknown): v is ClusterPasswords {
  const o = v as Record<string, unknown> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o['postgres'] === 'string' &&
    o['postgres'] !== '' &&
    typeof o['app'] === 'string' &&
    o['app'] !== ''
  );
}

/** The cluster's passwords; undefined when the file does not exist. Throws CliError if unreadable. */
export function readPasswords(l: Layout): ClusterPasswords | undefined {
  if (!existsSync(l.passwordsFile)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(l.passwordsFile, 'utf8'));
  } catch {
    parsed = undefined;
  }
  if (!isPasswords(parsed))
    throw new CliError(
      `${l.passwordsFile} is not a passwords file (expected {"postgres": "...", "app": "..."})`,
    );
  return parsed;
}

/** Reads the passwords file, or writes a new one (0600, temp file renamed) when there is none. */
export function ensurePasswords(l: Layout): ClusterPasswords {
  const found = readPasswords(l);
  if (found) return found;
  const made: ClusterPasswords = { postgres: generate(), app: generate() };
  const tmp = `${l.passwordsFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(made, null, 2) + '\n', { mode: 0o600 });
  // A umask cannot widen it, but an existing temp file keeps its mode: set it explicitly.
  chmodSync(tmp, 0o600);
  renameSync(tmp, l.passwordsFile);
  return made;
}

/**
 * The passwords a cluster needs: none for a trust cluster; for a cluster with passwords, the file,
 * which must be there (the nodes already hold the verifiers of what it said).
 */
export function clusterPasswords(l: Layout, c: ClusterFile): ClusterPasswords | undefined {
  if (authOf(c) === 'trust') return undefined;
  const p = readPasswords(l);
  if (!p)
    throw new CliError(
      `${l.passwordsFile} is missing, and the nodes of this cluster ask for the passwords it held: ` +
        `put it back, or start a new cluster in another directory (tessera up --dir DIR)`,
    );
  return p;
}

/** A cluster file without `auth` was made before passwords were the default: trust. */
export const authOf = (c: ClusterFile): 'scram' | 'trust' => c.auth ?? 'trust';
