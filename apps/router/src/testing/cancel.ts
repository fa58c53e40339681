// Test helpers for CancelRequest: a client's (pid, secret) as node-postgres received it, and a
// cancel sent on a connection of its own, as drivers do.
import { connect } from 'node:net';
import type pg from 'pg';
import { Writer, writeCancelRequest } from '@tessera/pg-wire';

/** The BackendKeyData a node-postgres client got at login. */
export function keyOf(client: pg.Client): { pid: number; secret: number } {
  const k = client as unknown as { processID: number; secretKey: number };
  return { pid: k.processID, secret: k.secretKey };
}

/** Sends a CancelRequest to 127.0.0.1:`port`; resolves when the router closed the connection. */
export function sendCancel(port: number, pid: number, secret: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    s.on('error', reject);
    s.on('connect', () => s.end(writeCancelRequest(new Writer(), pid, secret).flush()));
    s.on('close', () => resolve());
  });
}
