#!/usr/bin/env node
// Fails when a TypeScript file under a directory is longer than its line limit, or a function on
// the router's statement path is longer than its limit (STYLE.md: one concept per file, roughly
// under 400 lines). Functions are found with the TypeScript parser, so arrows and methods count.
// Run by `npm run lint`; `node scripts/check-sizes.mjs [dir] [maxFileLines] [maxFunctionLines]`.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const dir = resolve(root, process.argv[2] ?? 'apps/router/src');
const maxFile = Number(process.argv[3] ?? 400);
const maxFunction = Number(process.argv[4] ?? 80);
/** Where statements go through: functions there are held to the function limit. */
const STATEMENT_PATH = [
  'admit',
  'catalog',
  'commands',
  'copy',
  'execute',
  'pool',
  'protocol',
  'routing',
  'scatter',
  'session',
  'statement',
  'txn',
];

/**
 * Left out: the differential oracle's query generator, which its own work extends in parallel
 * (apps/router/src/testing/oracle is not this check's to split).
 */
const EXEMPT = ['testing/oracle/'];

function files(d, out = []) {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(d, e.name);
    if (e.isDirectory()) files(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const problems = [];
for (const file of files(dir)) {
  const rel = relative(root, file);
  if (EXEMPT.some((e) => relative(dir, file).startsWith(e))) continue;
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > maxFile) problems.push(`${rel}: ${lines} lines (at most ${maxFile})`);
  const top = relative(dir, file).split('/')[0];
  if (!STATEMENT_PATH.includes(top) || file.endsWith('.test.ts')) continue;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.end).line;
      const span = end - start + 1;
      if (span > maxFunction) {
        const name = node.name?.getText(source) ?? '(anonymous)';
        problems.push(
          `${rel}:${start + 1}: function ${name} is ${span} lines (at most ${maxFunction})`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

if (problems.length === 0) {
  console.log(
    `sizes: no file over ${maxFile} lines, no statement-path function over ${maxFunction}`,
  );
  process.exit(0);
}
for (const p of problems) console.error(p);
process.exit(1);
