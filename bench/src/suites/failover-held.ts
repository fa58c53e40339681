// What the router held during one kill, from its Prometheus /metrics read before and after: the
// statements it parked until a later catalog epoch (or a renewed lease), by reason, and how long
// they waited in all. Parsing is kept pure so it is tested on text, without a router.

export interface HoldCounters {
  /** Held statements that ended their wait (tessera_router_hold_seconds_count). */
  count: number;
  /** Their waits added up (tessera_router_hold_seconds_sum). */
  sumSeconds: number;
  /** tessera_router_held_statements_total by its `reason` label (range, node, lease). */
  byReason: Record<string, number>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/;

/** The hold counters in a /metrics text; a metric the text lacks counts as 0 (none held yet). */
export function parseHoldCounters(text: string): HoldCounters {
  const out: HoldCounters = { count: 0, sumSeconds: 0, byReason: {} };
  for (const line of text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    if (m[1] === 'tessera_router_hold_seconds_count') out.count += value;
    else if (m[1] === 'tessera_router_hold_seconds_sum') out.sumSeconds += value;
    else if (m[1] === 'tessera_router_held_statements_total') {
      const reason = /reason="([^"]*)"/.exec(m[2] ?? '')?.[1] ?? '';
      out.byReason[reason] = (out.byReason[reason] ?? 0) + value;
    }
  }
  return out;
}

export interface HeldDuringKill {
  held: number;
  /** The mean wait of those statements; null when none was held. */
  meanWaitMs: number | null;
  byReason: Record<string, number>;
}

/** What was held between two readings (counters only grow while the router runs). */
export function heldBetween(before: HoldCounters, after: HoldCounters): HeldDuringKill {
  const held = after.count - before.count;
  const byReason: Record<string, number> = {};
  for (const [reason, n] of Object.entries(after.byReason)) {
    const d = n - (before.byReason[reason] ?? 0);
    if (d > 0) byReason[reason] = d;
  }
  return {
    held,
    meanWaitMs: held > 0 ? ((after.sumSeconds - before.sumSeconds) * 1000) / held : null,
    byReason,
  };
}
