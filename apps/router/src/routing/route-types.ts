// What routing decides for one statement: plain data (STYLE.md principle 3), executed by the
// session, and the shorthands the routing rules build it with. Labels match the `route` label of
// tessera_router_statements_total.
import type { KeyspaceView, Snapshot } from '@tessera/keyspace';

/** Why a statement goes to one node; `flexible` = any node answers alike (prefer one already held). */
export interface NodeRoute {
  readonly kind: 'node';
  readonly node: string;
  readonly label: 'single' | 'home';
  readonly flexible: boolean;
}

/** The same statement on every node (DDL, writes to reference tables); `after` runs after it per node. */
export interface AllRoute {
  readonly kind: 'all';
  readonly nodes: readonly string[];
  /** Extra SQL per node appended to the statement in the same implicit transaction (fences). */
  readonly after: ReadonlyMap<string, string>;
  /** Tables created where the fence is added; for log lines. */
  readonly why: 'ddl' | 'reference_write' | 'maintenance' | 'lock';
}

/** A multi-row INSERT split by row owner: row indexes (into the VALUES list) per node. */
export interface SplitInsertRoute {
  readonly kind: 'split';
  readonly parts: readonly { readonly node: string; readonly rows: readonly number[] }[];
}

/**
 * INSERT ... SELECT into a sharded table whose rows may go to several of `nodes` (the target's
 * owners): run on each as it is when the SELECT is colocated with the target, else read through
 * the router and inserted by row owner (execute/insert-select.ts decides, with the table's columns).
 */
export interface InsertSelectRoute {
  readonly kind: 'insert_select';
  readonly nodes: readonly string[];
}

/** COPY FROM STDIN: into one node, every node (reference), or split by the key column. */
export type CopyRoute =
  | { readonly kind: 'copy'; readonly mode: 'node'; readonly node: string }
  | { readonly kind: 'copy'; readonly mode: 'all'; readonly nodes: readonly string[] }
  | {
      readonly kind: 'copy';
      readonly mode: 'split';
      readonly nodes: readonly string[];
      readonly keyColumn: string;
      readonly keyspace: KeyspaceView;
      readonly schema: string;
      readonly table: string;
    };

/**
 * A SELECT whose rows live on several nodes: planned (libs/sql planRead) and merged at the router
 * (scatter/scatter.ts). `nodes`: every owner of the keyspace, or only those an IN list pins.
 */
export interface ScatterRoute {
  readonly kind: 'scatter';
  readonly nodes: readonly string[];
}

/**
 * An UPDATE or DELETE whose rows live on several nodes: the same statement on each of `nodes`
 * (every owner of the keyspace, or those an IN list pins), atomic through two-phase commit.
 */
export interface MultiWriteRoute {
  readonly kind: 'multi_write';
  readonly nodes: readonly string[];
}

/** The router will not run it: SQLSTATE 0A000 (or `code`) with `message` naming why. */
export interface RefuseRoute {
  readonly kind: 'refuse';
  readonly message: string;
  /** Its SQLSTATE when not plain 0A000 (55006: DDL during a move), or when it has a hint. */
  readonly code?: string | undefined;
  readonly hint?: string | undefined;
}

/** The node depends on bind parameters not known yet (a Parse before its Bind). */
export interface NeedsParamsRoute {
  readonly kind: 'params';
}

export type Route =
  | NodeRoute
  | AllRoute
  | SplitInsertRoute
  | InsertSelectRoute
  | CopyRoute
  | ScatterRoute
  | MultiWriteRoute
  | RefuseRoute
  | NeedsParamsRoute;

/** The router will not run it (routing rules' shorthand). */
export function refuse(message: string, code?: string, hint?: string): Route {
  return code === undefined ? { kind: 'refuse', message } : { kind: 'refuse', message, code, hint };
}

/** The home node: global tables, and (`flexible`) statements any node answers alike. */
export function home(catalog: Snapshot, flexible: boolean): NodeRoute {
  return { kind: 'node', node: catalog.home, label: 'home', flexible };
}

/** Routes are plain data, never changed once made: one per node serves every statement. */
const singles = new Map<string, NodeRoute>();

/** The one node the statement's rows live on. */
export function single(node: string): NodeRoute {
  let r = singles.get(node);
  if (r === undefined) {
    r = Object.freeze({ kind: 'node', node, label: 'single', flexible: false });
    singles.set(node, r);
  }
  return r;
}

export type RouteLabel = 'single' | 'home' | 'all' | 'scatter' | 'refused';

export function routeLabel(r: Route): RouteLabel {
  switch (r.kind) {
    case 'node':
      return r.label;
    case 'all':
    case 'split':
    case 'insert_select':
    case 'multi_write':
      return 'all';
    case 'copy':
      return r.mode === 'node' ? 'single' : 'all';
    case 'scatter':
      return 'scatter';
    case 'refuse':
      return 'refused';
    case 'params':
      return 'single';
  }
}
