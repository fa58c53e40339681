// The session state a client left on its backends that cannot move to another backend (temporary
// objects, session advisory locks, WITH HOLD cursors, LISTEN; libs/sql sessionStateOf): per node,
// which kinds are there and which WITH HOLD cursors. A node with any keeps its backend for the
// client (execute/backends.ts settle), out of its pool's count so other clients still get one;
// when the client leaves, that backend is closed, never pooled (the node then drops the state).
import type { SessionStateChange, SessionStateKind } from '@tessera/sql';

export interface PinCounters {
  /** A session went from no pinned backend to one (+1), or back (-1). */
  pinnedSessions(delta: 1 | -1): void;
  /** A statement left state of `kind` on a backend. */
  pinned(kind: SessionStateKind): void;
}

interface NodeState {
  readonly kinds: Set<SessionStateKind>;
  readonly cursors: Set<string>;
}

export class SessionPins {
  private readonly byNode = new Map<string, NodeState>();

  constructor(private readonly counters: PinCounters) {}

  has(node: string): boolean {
    return this.byNode.has(node);
  }

  get size(): number {
    return this.byNode.size;
  }

  nodes(): string[] {
    return [...this.byNode.keys()];
  }

  /** Whether the session's backend on `node` holds state of `kind`. */
  holds(node: string, kind: SessionStateKind): boolean {
    return this.byNode.get(node)?.kinds.has(kind) === true;
  }

  /** The node a WITH HOLD cursor of this session lives on. */
  cursorNode(name: string): string | undefined {
    for (const [node, st] of this.byNode) if (st.cursors.has(name)) return node;
    return undefined;
  }

  /**
   * Records what a statement that succeeded on `node` changed. Returns whether the node is pinned
   * now (`before`: whether it was).
   */
  apply(node: string, change: SessionStateChange): { before: boolean; after: boolean } {
    const before = this.byNode.has(node);
    let st = this.byNode.get(node);
    if (st !== undefined) {
      for (const k of change.clears) st.kinds.delete(k);
      if (change.clears.includes('hold_cursor') || change.closes === '*') st.cursors.clear();
      else if (change.closes !== undefined) st.cursors.delete(change.closes);
    }
    if (change.creates.length > 0) {
      if (st === undefined) this.byNode.set(node, (st = { kinds: new Set(), cursors: new Set() }));
      for (const k of change.creates) {
        st.kinds.add(k);
        this.counters.pinned(k);
      }
      if (change.declares !== undefined) st.cursors.add(change.declares);
    }
    if (st !== undefined) {
      if (st.cursors.size > 0) st.kinds.add('hold_cursor');
      else st.kinds.delete('hold_cursor');
      if (st.kinds.size === 0) this.byNode.delete(node);
    }
    const after = this.byNode.has(node);
    this.count(before, after);
    return { before, after };
  }

  /** Everything on `node` is gone (DISCARD ALL ran there, or its backend was lost). */
  forget(node: string): void {
    const before = this.byNode.delete(node);
    this.count(before, false);
  }

  /** Every node's state is gone (the client left). */
  clear(): void {
    for (const node of [...this.byNode.keys()]) this.forget(node);
  }

  private count(nodeBefore: boolean, nodeAfter: boolean): void {
    if (nodeBefore === nodeAfter) return;
    // Only the first node pinned and the last one freed change the session's count.
    if (nodeAfter && this.byNode.size === 1) this.counters.pinnedSessions(1);
    if (!nodeAfter && this.byNode.size === 0) this.counters.pinnedSessions(-1);
  }
}
