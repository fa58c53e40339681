#!/usr/bin/env node
// The `tessera` binary. Runs the built CLI (dist/main.js) when there is one; otherwise runs the
// TypeScript sources through tsx, with the `development` export condition so that @tessera/*
// packages resolve to their sources too (no build needed while developing).
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';

const dist = new URL('../dist/main.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  // Registered after tsx, so it runs first: add the condition, then let tsx and node resolve.
  const addDevelopmentCondition =
    'export async function resolve(specifier, context, next) {' +
    "  const conditions = context.conditions.includes('development') ? context.conditions : [...context.conditions, 'development'];" +
    '  return next(specifier, { ...context, conditions });' +
    '}';
  registerHooks(`data:text/javascript,${encodeURIComponent(addDevelopmentCondition)}`);
  await import(new URL('../src/main.ts', import.meta.url).href);
}
