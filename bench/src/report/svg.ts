// A dependency-free horizontal bar chart of one metric (TPS by default): one block per workload,
// one bar per target, each block scaled to its own largest value so every workload stays legible;
// and the page, palette and footer that the line chart (svg-timeline.ts) shares.
import { formatValue, type SuiteResult } from './model.js';

export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#59a14f',
  '#e15759',
  '#76b7b2',
  '#b07aa1',
  '#edc948',
  '#9c755f',
];
export const WIDTH = 820;
const LABEL_W = 150;
const VALUE_W = 110;
const BAR_H = 18;
const GAP = 4;
const HEADER_H = 24;

export function esc(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

export function svgChart(r: SuiteResult): string {
  const metric = r.metrics.find((m) => m.key === r.chartMetric) ?? r.metrics[0];
  if (!metric) return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>';
  const targets = [...new Set(r.summary.map((s) => s.target))];
  const color = (t: string) => PALETTE[targets.indexOf(t) % PALETTE.length]!;
  const groups = [...new Set(r.summary.map((s) => s.group))];
  const barMax = WIDTH - LABEL_W - VALUE_W - 20;
  const parts: string[] = [];
  let y = 40;
  for (const g of groups) {
    const rows = r.summary.filter((s) => s.group === g);
    const max = Math.max(0, ...rows.map((s) => s.values[metric.key] ?? 0));
    parts.push(`<text x="10" y="${y + 16}" font-weight="bold">${esc(g)}</text>`);
    y += HEADER_H;
    for (const s of rows) {
      const v = s.values[metric.key] ?? null;
      const w = v !== null && max > 0 ? Math.max(1, (v / max) * barMax) : 0;
      parts.push(
        `<text x="${LABEL_W - 8}" y="${y + 13}" text-anchor="end">${esc(s.target)}</text>`,
        `<rect x="${LABEL_W}" y="${y}" width="${w.toFixed(1)}" height="${BAR_H}" fill="${color(s.target)}"/>`,
        `<text x="${LABEL_W + w + 6}" y="${y + 13}">${v === null ? 'no result' : esc(formatValue(v, metric.digits))}</text>`,
      );
      y += BAR_H + GAP;
    }
    y += 8;
  }
  return svgDocument(
    `${r.title}: ${metric.label}`,
    y + 24,
    parts,
    `${machineLine(r)} · medians of ${String(r.settings['rounds'])} rounds`,
  );
}

/** The machine and the start of the run, for a chart's footer. */
export function machineLine(r: SuiteResult): string {
  return `${r.machine.cpuModel}, ${r.machine.cores} cores · ${r.startedAt.slice(0, 16).replace('T', ' ')}`;
}

/** A whole chart: white page, bold title, the drawing's elements, and a grey footer line. */
export function svgDocument(title: string, height: number, parts: string[], note: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
    ...parts,
    `<text x="10" y="${height - 8}" fill="#666" font-size="11">${esc(note)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
