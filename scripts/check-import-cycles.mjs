#!/usr/bin/env node
// Fails when an import circle among the TypeScript files under a directory spans more than a
// given number of files (default: apps/router/src, at most 2). Every relative import counts,
// `import type` included: a type-only circle is still one concept that cannot be read, tested or
// moved apart. Run by `npm run lint`; `node scripts/check-import-cycles.mjs [dir] [max]`.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const dir = resolve(root, process.argv[2] ?? 'apps/router/src');
const max = Number(process.argv[3] ?? 2);

function files(d, out = []) {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(d, e.name);
    if (e.isDirectory()) files(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`, with
// comments removed first so a commented-out import is not an edge.
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s+(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out = new Set();
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2];
    if (spec === undefined || !spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    if (existsSync(target)) out.add(target);
    else if (existsSync(`${target}.ts`)) out.add(`${target}.ts`);
    else if (existsSync(join(target, 'index.ts'))) out.add(join(target, 'index.ts'));
  }
  return out;
}

const all = files(dir);
const graph = new Map(all.map((f) => [f, [...importsOf(f)].filter((t) => t.startsWith(dir))]));

// Tarjan's strongly connected components, iteratively (no recursion limit on deep chains).
function components() {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  for (const start of graph.keys()) {
    if (idx.has(start)) continue;
    const work = [{ v: start, i: 0 }];
    idx.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.v);
      if (frame.i < edges.length) {
        const w = edges[frame.i++];
        if (!idx.has(w)) {
          idx.set(w, index);
          low.set(w, index++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.v, Math.min(low.get(frame.v), idx.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].v;
        low.set(parent, Math.min(low.get(parent), low.get(frame.v)));
      }
      if (low.get(frame.v) === idx.get(frame.v)) {
        const scc = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          scc.push(w);
        } while (w !== frame.v);
        out.push(scc);
      }
    }
  }
  return out;
}

const rel = (f) => relative(root, f);
const bad = components().filter((c) => c.length > max);
if (bad.length === 0) {
  console.log(`import cycles: none over ${max} files in ${rel(dir)} (${all.length} files)`);
  process.exit(0);
}
for (const c of bad) {
  console.error(`import circle of ${c.length} files in ${rel(dir)} (at most ${max} allowed):`);
  for (const f of c.sort()) {
    const inCycle = graph.get(f).filter((t) => c.includes(t));
    console.error(`  ${rel(f)} -> ${inCycle.map(rel).join(', ')}`);
  }
}
process.exit(1);
