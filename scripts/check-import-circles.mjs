#!/usr/bin/env node
// Fails when relative imports between the TypeScript files under a directory form a circle of
// more than 2 files (a strongly connected component of the import graph). Two files that
// import each other are tolerated; a longer circle means a concept is spread over files that cannot
// be understood or tested one at a time (issue 13). Test files (*.test.ts, *.itest.ts) are left
// out. Every import counts, `import type` and `export ... from` included, and so does a dynamic
// import() of a literal path: a circle of types is still a circle of concepts.
//
// Circles that exist and are accepted are listed in `scripts/import-circles.allow.json` (an
// array of arrays of repository-relative paths); a listed circle must match exactly, so a circle
// that grows, shrinks or is new fails. Each directory is checked on its own (imports between
// projects go through package names, which Nx's project graph checks). Run by `npm run lint` on
// every `apps/*/src` and `libs/*/src`; `node scripts/check-import-circles.mjs [dir...]`.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const maxFiles = 2;
const allowFile = join(import.meta.dirname, 'import-circles.allow.json');

// Every project's source directory: apps/<name>/src and libs/<name>/src.
function projectDirs() {
  const out = [];
  for (const group of ['apps', 'libs']) {
    for (const e of readdirSync(join(root, group), { withFileTypes: true })) {
      const src = join(root, group, e.name, 'src');
      if (e.isDirectory() && existsSync(src) && statSync(src).isDirectory()) out.push(src);
    }
  }
  return out.sort();
}

function files(d, out = []) {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(d, e.name);
    if (e.isDirectory()) files(p, out);
    else if (isSource(e.name)) out.push(p);
  }
  return out;
}

function isSource(name) {
  return (
    name.endsWith('.ts') &&
    !name.endsWith('.d.ts') &&
    !name.endsWith('.test.ts') &&
    !name.endsWith('.itest.ts')
  );
}

/** The relative module specifiers `file` imports or re-exports. */
function specifiers(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out = [];
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length === 1 &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.filter((s) => s.startsWith('./') || s.startsWith('../'));
}

/** `./x.js` from `a/b.ts` -> `a/x.ts` (or `a/x/index.ts`), if that file is in the graph. */
function resolveImport(from, spec, known) {
  const base = resolve(dirname(from), spec);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base,
    `${base}.ts`,
    join(base.replace(/\.js$/, ''), 'index.ts'),
  ];
  return candidates.find((c) => known.has(c));
}

/** The import graph of the files under `dir`: file -> the files it imports. */
function graph(dir) {
  const all = files(dir);
  const known = new Set(all);
  const edges = new Map(all.map((f) => [f, []]));
  for (const f of all) {
    for (const s of specifiers(f)) {
      const to = resolveImport(f, s, known);
      if (to !== undefined && to !== f) edges.get(f).push(to);
    }
  }
  return { all, edges };
}

// Tarjan's strongly connected components, iterative so deep import chains cannot overflow.
function components({ all, edges }) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  for (const start of all) {
    if (idx.has(start)) continue;
    const work = [[start, 0]];
    idx.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      const next = edges.get(v);
      if (i < next.length) {
        frame[1]++;
        const w = next[i];
        if (!idx.has(w)) {
          idx.set(w, index);
          low.set(w, index++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v), idx.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === idx.get(v)) {
        const scc = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        out.push(scc);
      }
    }
  }
  return out;
}

const key = (paths) => [...paths].sort().join('\n');
const allowed = existsSync(allowFile)
  ? new Set(JSON.parse(readFileSync(allowFile, 'utf8')).map(key))
  : new Set();

const rel = (f) => relative(root, f);

/** Checks one directory; prints what it found; true when no circle there is too long. */
function check(dir) {
  const g = graph(dir);
  const circles = components(g)
    .filter((c) => c.length > maxFiles)
    .map((c) => c.map(rel).sort());
  const offending = circles.filter((c) => !allowed.has(key(c)));
  if (offending.length === 0) {
    const note = circles.length > 0 ? ` (${circles.length} allowed by ${rel(allowFile)})` : '';
    console.log(`import circles: none in ${rel(dir)} spans more than ${maxFiles} files${note}`);
    return true;
  }
  for (const c of offending) {
    console.error(`import circle of ${c.length} files in ${rel(dir)} (at most ${maxFiles}):`);
    const inCircle = new Set(c);
    for (const f of c) {
      const to = g.edges
        .get(resolve(root, f))
        .map(rel)
        .filter((t) => inCircle.has(t));
      console.error(`  ${f} -> ${[...new Set(to)].join(', ')}`);
    }
  }
  return false;
}

const args = process.argv.slice(2);
const dirs = args.length > 0 ? args.map((d) => resolve(root, d)) : projectDirs();
let ok = true;
for (const d of dirs) ok = check(d) && ok;
process.exit(ok ? 0 : 1);
