// Who may call what. A standby answers every call UNAVAILABLE. Off loopback, calls that change
// the cluster need `authorization: Bearer <TESSERA_ADMIN_TOKEN>` (DESIGN.md section 8); the token
// is compared in constant time and never logged.
import { createHash, timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import {
  ACTIVE_COORDINATOR_KEY,
  Code,
  RpcError,
  STANDBY_KEY,
  type Authorize,
  type CallContext,
} from '@tessera/proto';

export interface AuthPolicy {
  /** False while standing by (or stepping down). */
  isActive: () => boolean;
  /** The active coordinator's address, when this one stands by and knows it. */
  activeAddress?: () => string | undefined;
  /** AgentService is served also while the engine keeps agents after the lock was lost. */
  acceptsAgents?: () => boolean;
  /** Set when the listen address is not loopback. */
  requiredToken: string | undefined;
}

/** Methods (by proto name) that change the cluster and so need the token off loopback. */
export const GUARDED: Readonly<Record<string, ReadonlySet<string> | 'all'>> = {
  'tessera.v1.AdminService': 'all',
  'tessera.v1.JobService': new Set(['SubmitJob', 'ClaimJob', 'ReportStep', 'CancelJob']),
  'tessera.v1.TxnService': new Set(['Resolve']),
};

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** True when `presented` equals `expected`, taking the same time whatever they are. */
export function tokenMatches(presented: string, expected: string): boolean {
  // Hashing first gives equal lengths, so timingSafeEqual leaks neither content nor length.
  return timingSafeEqual(digest(presented), digest(expected));
}

function bearer(ctx: CallContext): string | undefined {
  const value = ctx.metadata.get('authorization')[0];
  if (typeof value !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(value.trim());
  return m?.[1];
}

/** Answered by a standby too. */
const ALWAYS = 'tessera.v1.CoordinatorService';

export function authorizer(policy: AuthPolicy): Authorize {
  return (ctx) => {
    const agentsOk = ctx.service === 'tessera.v1.AgentService' && policy.acceptsAgents?.();
    if (!policy.isActive() && ctx.service !== ALWAYS && !agentsOk) {
      // The call never ran: the metadata says so, and names the active coordinator if known.
      const md = new grpc.Metadata();
      md.set(STANDBY_KEY, '1');
      const active = policy.activeAddress?.();
      if (active !== undefined && active !== '') md.set(ACTIVE_COORDINATOR_KEY, active);
      throw new RpcError(
        Code.UNAVAILABLE,
        `this coordinator is a standby; call the active coordinator${active ? ` at ${active}` : ''}`,
        md,
      );
    }
    const token = policy.requiredToken;
    if (token === undefined) return;
    const guarded = GUARDED[ctx.service];
    if (guarded === undefined || (guarded !== 'all' && !guarded.has(ctx.method))) return;
    const presented = bearer(ctx);
    if (presented === undefined || !tokenMatches(presented, token)) {
      throw new RpcError(
        Code.UNAUTHENTICATED,
        'admin calls need a bearer token (authorization: Bearer <TESSERA_ADMIN_TOKEN>)',
      );
    }
  };
}
