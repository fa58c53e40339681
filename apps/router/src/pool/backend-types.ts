// What a backend connects to, who hears from it between statements, and how a node's refusal
// travels: the plain types around pool/backend.ts.
import type { NoticeFields } from '@tessera/pg-wire';

export interface BackendTarget {
  readonly node: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** Used only if the node asks for a password. */
  readonly password?: string | undefined;
  /** Sent at login when set (the router's own connections name themselves). */
  readonly applicationName?: string | undefined;
}

/**
 * The session holding a backend between its statements: told of what the node sends then (a
 * LISTEN's notifications, a FATAL before the node closes the connection).
 */
export interface IdleOwner {
  /** A NotificationResponse frame, whole. */
  notification(frame: Buffer): void;
  /** The node sent a FATAL error and the connection is gone. */
  fatal(fields: NoticeFields): void;
}

/** An ErrorResponse a node sent, kept whole so the client sees the node's own fields. */
export class BackendError extends Error {
  override readonly name = 'BackendError';
  readonly sqlstate: string;
  constructor(readonly fields: NoticeFields) {
    super(fields.message);
    this.sqlstate = fields.code;
  }
}
