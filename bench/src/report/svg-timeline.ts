// A dependency-free line chart of values over time (a proxy's RSS during a long run): one line per
// series, dashed reference lines for marks, and a value axis fitted to the data rather than
// starting at zero, since the question it answers is whether a line drifts by a few percent.
import { formatValue, type SuiteResult, type Timeline } from './model.js';
import { esc, machineLine, PALETTE, svgDocument, WIDTH } from './svg.js';

const LEFT = 70;
const RIGHT = 20;
const TOP = 40;
const PLOT_H = 300;
const LEGEND_ROW_H = 18;

/** A round step (1, 2 or 5 times a power of ten) that cuts `range` into about `ticks` parts. */
function niceStep(range: number, ticks: number): number {
  if (!(range > 0)) return 1;
  const raw = range / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

/** Decimal places that tell ticks `step` apart. */
function stepDigits(step: number): number {
  return step >= 1 ? 0 : Math.ceil(-Math.log10(step) - 1e-9);
}

/** The multiples of `step` within [lo, hi]. */
function ticksOf(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  return out;
}

export function svgTimeline(r: SuiteResult, t: Timeline): string {
  const marks = t.marks ?? [];
  const values = [
    ...t.series.flatMap((s) => s.points.map((p) => p[1])),
    ...marks.map((m) => m.value),
  ];
  const endS = Math.max(1, ...t.series.flatMap((s) => s.points.map((p) => p[0])));
  let lo = values.length > 0 ? Math.min(...values) : 0;
  let hi = values.length > 0 ? Math.max(...values) : 1;
  const pad = hi > lo ? (hi - lo) * 0.05 : Math.max(1, hi * 0.01);
  lo = Math.max(0, lo - pad);
  hi += pad;
  const plotW = WIDTH - LEFT - RIGHT;
  const x = (s: number) => LEFT + (s / endS) * plotW;
  const y = (v: number) => TOP + PLOT_H - ((v - lo) / (hi - lo)) * PLOT_H;
  const parts: string[] = [];

  const yStep = niceStep(hi - lo, 6);
  for (const v of ticksOf(lo, hi, yStep)) {
    const digits = Math.min(t.digits, stepDigits(yStep));
    parts.push(
      `<line x1="${LEFT}" y1="${y(v).toFixed(1)}" x2="${WIDTH - RIGHT}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${LEFT - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${esc(formatValue(v, digits))}</text>`,
    );
  }
  const xStep = niceStep(endS, 10);
  for (const s of ticksOf(0, endS, xStep)) {
    parts.push(
      `<text x="${x(s).toFixed(1)}" y="${TOP + PLOT_H + 16}" text-anchor="middle">${esc(formatValue(s, stepDigits(xStep)))}</text>`,
    );
  }
  parts.push(
    `<rect x="${LEFT}" y="${TOP}" width="${plotW}" height="${PLOT_H}" fill="none" stroke="#999"/>`,
    `<text x="${LEFT + plotW / 2}" y="${TOP + PLOT_H + 32}" text-anchor="middle" fill="#444">seconds into the run</text>`,
    `<text x="14" y="${TOP + PLOT_H / 2}" text-anchor="middle" fill="#444" transform="rotate(-90 14 ${TOP + PLOT_H / 2})">${esc(t.label)}</text>`,
  );
  for (const m of marks) {
    parts.push(
      `<line x1="${LEFT}" y1="${y(m.value).toFixed(1)}" x2="${WIDTH - RIGHT}" y2="${y(m.value).toFixed(1)}" stroke="#c00" stroke-dasharray="6 4"/>`,
      `<text x="${WIDTH - RIGHT - 4}" y="${(y(m.value) - 4).toFixed(1)}" text-anchor="end" fill="#c00">${esc(m.label)}</text>`,
    );
  }
  for (const [i, e] of (t.events ?? []).entries()) {
    if (e.atS < 0 || e.atS > endS) continue;
    const ex = x(e.atS).toFixed(1);
    parts.push(
      `<line x1="${ex}" y1="${TOP}" x2="${ex}" y2="${TOP + PLOT_H}" stroke="#888" stroke-dasharray="2 3"/>`,
      `<text x="${ex}" y="${TOP + 12 + (i % 3) * 11}" text-anchor="middle" fill="#666" font-size="10">${esc(e.label)}</text>`,
    );
  }
  let legendY = TOP + PLOT_H + 50;
  t.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const points = s.points.map(([sec, v]) => `${x(sec).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline points="${points}" fill="none" stroke="${color}" stroke-width="1.5"/>`,
      `<line x1="${LEFT}" y1="${legendY - 4}" x2="${LEFT + 24}" y2="${legendY - 4}" stroke="${color}" stroke-width="3"/>`,
      `<text x="${LEFT + 30}" y="${legendY}">${esc(s.name)}</text>`,
    );
    legendY += LEGEND_ROW_H;
  });
  return svgDocument(`${r.title}: ${t.label} over time`, legendY + 16, parts, machineLine(r));
}
