// A binary min-heap for the k-way merge: k entries, O(log k) per row.
export class Heap<T> {
  private readonly items: T[] = [];
  private readonly less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.less = less;
  }

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = a[p] as T;
      if (!this.less(item, parent)) break;
      a[i] = parent;
      i = p;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const child = r < a.length && this.less(a[r] as T, a[l] as T) ? r : l;
      if (!this.less(a[child] as T, last)) break;
      a[i] = a[child] as T;
      i = child;
    }
    a[i] = last;
    return top;
  }
}
