// Writes a result as <date>-<suite>.json / .md / .svg into the results directory.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { markdownReport } from './markdown.js';
import type { SuiteResult } from './model.js';
import { svgChart } from './svg.js';
import { svgTimeline } from './svg-timeline.js';

export interface WrittenFiles {
  json: string;
  md: string;
  svg: string;
}

export function writeResult(dir: string, r: SuiteResult): WrittenFiles {
  mkdirSync(dir, { recursive: true });
  const base = `${r.date}-${r.suite}`;
  const files = {
    json: join(dir, `${base}.json`),
    md: join(dir, `${base}.md`),
    svg: join(dir, `${base}.svg`),
  };
  const json = JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  writeFileSync(files.json, `${json}\n`);
  writeFileSync(files.svg, r.timeline ? svgTimeline(r, r.timeline) : svgChart(r));
  writeFileSync(files.md, markdownReport(r, `${base}.svg`));
  return files;
}
