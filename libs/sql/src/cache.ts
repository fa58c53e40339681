// A bounded LRU of analyses keyed by statement text: a prepared or repeated statement is parsed
// once. With `normalizeLiterals`, texts that differ only in their literals (psycopg2, Django and
// every driver that sends literal SQL on the simple protocol) share one template per shape
// (shapes.ts): after the second text of a shape, a new text costs a scan, not a parse. Safe to
// share because analyses are frozen.
import type { Analysis } from './types.js';
import { analyzeAll } from './analyze.js';
import { normalizeLiterals } from './literals.js';
import type { NormalizedText } from './literals.js';
import { buildTemplate, instantiate } from './shapes.js';
import type { ShapeTemplate } from './shapes.js';

export interface AnalysisCacheOptions {
  /** Share analyses between texts that differ only in literal constants (default false). */
  readonly normalizeLiterals?: boolean;
}

/** Per shape: the first text seen (a template is built when a second, different one comes). */
type ShapeEntry =
  | {
      readonly kind: 'seen';
      readonly sql: string;
      readonly norm: NormalizedText;
      readonly analyses: readonly Analysis[];
    }
  | { readonly kind: 'template'; readonly template: ShapeTemplate }
  | { readonly kind: 'exact' };

function touch<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
}

export class AnalysisCache {
  private readonly entries = new Map<string, readonly Analysis[]>();
  private readonly shapes = new Map<string, ShapeEntry>();
  private readonly normalize: boolean;
  private hitCount = 0;
  private missCount = 0;
  private shapeHitCount = 0;

  constructor(
    readonly maxEntries = 10_000,
    options: AnalysisCacheOptions = {},
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError('AnalysisCache: maxEntries must be a positive integer');
    this.normalize = options.normalizeLiterals === true;
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
    if (this.normalize) {
      const viaShape = this.fromShape(sql);
      if (viaShape !== undefined) return viaShape;
    }
    return this.parse(sql);
  }

  private parse(sql: string): readonly Analysis[] {
    this.missCount++;
    const computed = analyzeAll(sql);
    touch(this.entries, sql, computed, this.maxEntries);
    return computed;
  }

  /** A hit on the text's shape, or undefined (then the caller parses; the shape is recorded). */
  private fromShape(sql: string): readonly Analysis[] | undefined {
    const norm = normalizeLiterals(sql);
    if (norm === undefined || norm.slots.length === 0) return undefined;
    const entry = this.shapes.get(norm.key);
    switch (entry?.kind) {
      case 'template':
        this.shapeHitCount++;
        this.shapes.delete(norm.key);
        this.shapes.set(norm.key, entry);
        return instantiate(entry.template, sql, norm);
      case 'exact':
        return undefined;
      case 'seen': {
        const template = buildTemplate(entry.sql, entry.norm, entry.analyses);
        touch(
          this.shapes,
          norm.key,
          template === undefined ? { kind: 'exact' } : { kind: 'template', template },
          this.maxEntries,
        );
        if (template === undefined) return undefined;
        this.shapeHitCount++;
        return instantiate(template, sql, norm);
      }
      case undefined: {
        const analyses = this.parse(sql);
        touch(this.shapes, norm.key, { kind: 'seen', sql, norm, analyses }, this.maxEntries);
        return analyses;
      }
    }
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

  /** Texts answered from their shape's template (no parse), a subset of neither hits nor misses. */
  get shapeHits(): number {
    return this.shapeHitCount;
  }

  clear(): void {
    this.entries.clear();
    this.shapes.clear();
  }
}
