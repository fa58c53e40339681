// A client's list of server addresses and which one it calls now: the way every Tessera client
// finds the active coordinator among several and follows it when it changes. A standby answers
// UNAVAILABLE naming the active one in trailing metadata; a server that is down refuses the
// connection. Both mean the call never ran, so it may be tried on the next address at once.
import * as grpc from '@grpc/grpc-js';
import { Code, type RpcError } from './errors.js';

/** Trailing metadata of a standby's UNAVAILABLE: the active coordinator's address, if known. */
export const ACTIVE_COORDINATOR_KEY = 'tessera-active-coordinator';
/** Trailing metadata of a standby's UNAVAILABLE: the call was refused before it ran. */
export const STANDBY_KEY = 'tessera-standby';

/** Reconnect quickly: a coordinator that was down for a second must not cost a client minutes. */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.min_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

/** The active coordinator's address a standby named in `err`'s metadata, if any. */
export function activeHint(err: RpcError): string | undefined {
  const v = err.metadata?.get(ACTIVE_COORDINATOR_KEY)[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * True when `err` means the call never reached a handler: a standby refused it, or no
 * connection could be made. Such a call is safe to send to another address.
 */
export function neverRan(err: RpcError): boolean {
  if (err.code !== Code.UNAVAILABLE) return false;
  if (err.metadata?.get(STANDBY_KEY)[0] !== undefined) return true;
  return /No connection established|ECONNREFUSED|connect E|Failed to connect|Name resolution failed|getaddrinfo|ENOTFOUND|EHOSTUNREACH/i.test(
    err.details,
  );
}

export class Endpoints {
  private current: string;
  private readonly clients = new Map<string, grpc.Client>();
  private closed = false;

  constructor(
    readonly addresses: readonly string[],
    private readonly channelOptions: grpc.ChannelOptions = {},
  ) {
    if (addresses.length === 0) throw new Error('a client needs at least one address');
    this.current = addresses[0]!;
  }

  /** The address calls go to now. */
  get address(): string {
    return this.current;
  }

  /** The connection to `address` (made on first use). */
  client(address: string = this.current): grpc.Client {
    let c = this.clients.get(address);
    if (!c) {
      c = new grpc.Client(address, grpc.credentials.createInsecure(), {
        ...CHANNEL_OPTIONS,
        ...this.channelOptions,
      });
      this.clients.set(address, c);
      if (this.closed) c.close();
      else OWNERS.set(c, this);
    }
    return c;
  }

  /** How many addresses a call may try before it gives up: every one twice, plus hints. */
  get maxAttempts(): number {
    return this.addresses.length * 2 + 2;
  }

  /**
   * Learns from a failure of a call to `address`: a standby's hint moves calls to the active
   * coordinator; a refused connection or a hintless UNAVAILABLE moves them to the next address.
   * Other failures change nothing. Returns where the next call goes.
   */
  failed(address: string, err: RpcError): string {
    if (err.code !== Code.UNAVAILABLE) return this.current;
    if (this.current !== address) return this.current; // someone else already moved on
    const hint = activeHint(err);
    if (hint !== undefined && hint !== address) this.current = hint;
    else {
      const i = this.addresses.indexOf(address);
      this.current = this.addresses[(i + 1) % this.addresses.length]!;
    }
    return this.current;
  }

  close(): void {
    this.closed = true;
    for (const c of this.clients.values()) c.close();
  }
}

/** Which Endpoints made a grpc.Client, so `channel: other.grpcClient` shares the whole list. */
const OWNERS = new WeakMap<grpc.Client, Endpoints>();

export function endpointsOf(client: grpc.Client): Endpoints | undefined {
  return OWNERS.get(client);
}
