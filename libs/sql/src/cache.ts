// A bounded LRU of analyses keyed by statement text: a prepared or repeated statement is parsed
// once. Safe to share because analyses are frozen.
import type { Analysis } from './types.js';
import { analyzeAll } from './analyze.js';

export class AnalysisCache {
  private readonly entries = new Map<string, readonly Analysis[]>();
  private hitCount = 0;
  private missCount = 0;

  constructor(readonly maxEntries = 10_000) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError('AnalysisCache: maxEntries must be a positive integer');
  }

  /** The analyses of `sql`, computed by analyzeAll on a miss. Syntax errors are thrown, not cached. */
  get(sql: string): readonly Analysis[] {
    const found = this.entries.get(sql);
    if (found !== undefined) {
      this.hitCount++;
      // Re-insert to mark as most recently used (Map keeps insertion order).
      this.entries.delete(sql);
      this.entries.set(sql, found);
      return found;
    }
    this.missCount++;
    const computed = analyzeAll(sql);
    this.entries.set(sql, computed);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    return computed;
  }

  has(sql: string): boolean {
    return this.entries.has(sql);
  }

  get size(): number {
    return this.entries.size;
  }

  get hits(): number {
    return this.hitCount;
  }

  get misses(): number {
    return this.missCount;
  }

  clear(): void {
    this.entries.clear();
  }
}
