// The report's chart: throughput per second by outcome and p50/p99 latency per 10 s over the
// run, with each fault drawn as a band from its start to its heal, labelled by kind.
import type { SoakReport } from './model.js';

const W = 1100;
const PAD_L = 60;
const PAD_R = 20;
const PANEL_H = 220;
const GAP = 50;
const TOP = 40;

export function renderSvg(r: SoakReport): string {
  const secs = r.throughput;
  const tMax = Math.max(1, secs.length, ...r.faults.map((f) => f.endS ?? f.startS));
  const x = (s: number): number => PAD_L + (s / tMax) * (W - PAD_L - PAD_R);
  const opsMax = niceMax(Math.max(1, ...secs.map((c) => c.ok + c.fail + c.info)));
  const latMax = niceMax(Math.max(1, ...r.latency.map((l) => l.p99Ms)));
  const y1 = (v: number): number => TOP + PANEL_H - (v / opsMax) * PANEL_H;
  const top2 = TOP + PANEL_H + GAP;
  const y2 = (v: number): number => top2 + PANEL_H - (Math.min(v, latMax) / latMax) * PANEL_H;
  const H = top2 + PANEL_H + 60;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(
    `<text x="${PAD_L}" y="18" font-size="14">soak ${esc(r.plan)} (seed ${r.seed}): ${r.check.operations.total} operations, ${r.faults.length} faults, ${r.check.anomalyTotal} anomalies</text>`,
  );
  // fault bands on both panels
  r.faults.forEach((f, i) => {
    const x0 = x(f.startS);
    const x1 = Math.max(x0 + 2, x(f.endS ?? f.startS));
    for (const t of [TOP, top2])
      out.push(
        `<rect x="${x0.toFixed(1)}" y="${t}" width="${(x1 - x0).toFixed(1)}" height="${PANEL_H}" fill="${colorOf(f.kind)}" fill-opacity="0.18"/>`,
      );
    out.push(
      `<text x="${x0.toFixed(1)}" y="${TOP - 4 - (i % 2) * 11}" fill="${colorOf(f.kind)}">${esc(short(f.kind))}</text>`,
    );
  });
  for (const [t, label, max] of [
    [TOP, 'operations/s', opsMax],
    [top2, 'latency ms (ok ops; p50 grey, p99 black)', latMax],
  ] as const) {
    out.push(
      `<rect x="${PAD_L}" y="${t}" width="${W - PAD_L - PAD_R}" height="${PANEL_H}" fill="none" stroke="#999"/>`,
    );
    out.push(`<text x="${PAD_L + 4}" y="${t + 14}">${label}</text>`);
    for (let k = 0; k <= 4; k++) {
      const v = (max * k) / 4;
      const yy = t + PANEL_H - (k / 4) * PANEL_H;
      out.push(`<text x="${PAD_L - 6}" y="${yy + 4}" text-anchor="end">${fmt(v)}</text>`);
      out.push(`<line x1="${PAD_L}" x2="${W - PAD_R}" y1="${yy}" y2="${yy}" stroke="#eee"/>`);
    }
  }
  const line = (pts: [number, number][], color: string, width = 1): void => {
    if (pts.length === 0) return;
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="${width}" points="${pts.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`,
    );
  };
  line(
    secs.map((c) => [x(c.s), y1(c.ok)]),
    '#2a7d2a',
  );
  line(
    secs.map((c) => [x(c.s), y1(c.fail)]),
    '#d98c00',
  );
  line(
    secs.map((c) => [x(c.s), y1(c.info)]),
    '#c0392b',
  );
  line(
    r.latency.map((l) => [x(l.s + 5), y2(l.p50Ms)]),
    '#999',
    1.5,
  );
  line(
    r.latency.map((l) => [x(l.s + 5), y2(l.p99Ms)]),
    '#000',
    1.5,
  );
  for (let k = 0; k <= 10; k++) {
    const s = (tMax * k) / 10;
    out.push(
      `<text x="${x(s).toFixed(1)}" y="${top2 + PANEL_H + 16}" text-anchor="middle">${Math.round(s)} s</text>`,
    );
  }
  const legend = [
    ['#2a7d2a', 'ok'],
    ['#d98c00', 'fail'],
    ['#c0392b', 'info (unknown)'],
  ];
  legend.forEach(([c, l], i) =>
    out.push(`<text x="${W - PAD_R - 260 + i * 80}" y="${TOP + 14}" fill="${c}">${l}</text>`),
  );
  out.push(
    `<text x="${PAD_L}" y="${H - 14}">bands: faults from start to heal (${[...new Set(r.faults.map((f) => f.kind))].map(short).join(', ')})</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

const fmt = (v: number): string =>
  v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10);
const short = (k: string): string =>
  k.replace('kill-', 'k-').replace('partition-', 'part-').replace('coordinator', 'coord');
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];
function colorOf(kind: string): string {
  let h = 0;
  for (let i = 0; i < kind.length; i++) h = (h * 31 + kind.charCodeAt(i)) >>> 0;
  return PALETTE[h % PALETTE.length]!;
}
