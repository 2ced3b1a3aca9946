/**
 * Bar charts drawn on the server as SVG: no script, no library. Each chart is drawn twice, a wide
 * one and a narrow one with fewer labels and larger text, and the stylesheet shows the one that
 * fits the screen (the other is `display: none`, out of the accessibility tree too), so the chart
 * stays readable on a phone. A chart never stands alone: the page gives its numbers as a table.
 */
import { type Html, html } from './html.js';

export interface ChartSeries {
  label: string;
  /** The class that colours its bars and legend swatch (`series-1` … `series-6` in the stylesheets). */
  className: string;
}

export interface ChartPoint {
  /** The label under the bar ("28" for a day). */
  label: string;
  /** What a pointer hovering the bar reads. */
  title: string;
  /** One value per series, stacked bottom up in the series' order. */
  values: number[];
}

export interface BarChartOptions {
  /** The chart's accessible name: what it shows and its total. */
  label: string;
  series: ChartSeries[];
  points: ChartPoint[];
  /** How a value reads on the axis (default: a grouped integer). */
  format?: (value: number) => string;
}

interface Frame {
  width: number;
  height: number;
  top: number;
  bottom: number;
  left: number;
  right: number;
  /** At most this many labels under the bars. */
  maxLabels: number;
}

const WIDE: Frame = { width: 720, height: 220, top: 16, bottom: 28, left: 44, right: 8, maxLabels: 31 };
const NARROW: Frame = { width: 340, height: 240, top: 14, bottom: 30, left: 40, right: 6, maxLabels: 7 };

const grouped = (n: number) => n.toLocaleString('en-US');

export function niceStep(max: number): number {
  const rough = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(Math.max(1, rough)));
  for (const factor of [1, 2, 5, 10]) if (factor * magnitude >= rough) return factor * magnitude;
  return 10 * magnitude;
}

function draw(options: BarChartOptions, frame: Frame, className: string): Html {
  const format = options.format ?? grouped;
  const plotHeight = frame.height - frame.top - frame.bottom;
  const plotWidth = frame.width - frame.left - frame.right;
  const totals = options.points.map((point) => point.values.reduce((sum, value) => sum + value, 0));
  const max = Math.max(1, ...totals);
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;
  const count = Math.max(1, options.points.length);
  const slot = plotWidth / count;
  const barWidth = Math.max(2, slot * 0.62);
  const y = (value: number) => frame.top + plotHeight - (value / top) * plotHeight;
  const ticks = Array.from({ length: Math.floor(top / step) + 1 }, (_, i) => i * step);
  const labelEvery = Math.ceil(count / frame.maxLabels);
  return html`<svg class="chart ${className}" viewBox="0 0 ${frame.width} ${frame.height}" role="img" aria-label="${options.label}">
  ${ticks.map(
    (
      tick,
    ) => html`<line class="axis" x1="${frame.left}" x2="${frame.width - frame.right}" y1="${y(tick)}" y2="${y(tick)}"></line>
  <text x="${frame.left - 6}" y="${y(tick) + 4}" text-anchor="end">${format(tick)}</text>`,
  )}
  ${options.points.map((point, i) => {
    const x = frame.left + i * slot + (slot - barWidth) / 2;
    let base = 0;
    const bars = point.values.map((value, s) => {
      const from = base;
      base += value;
      if (value <= 0) return html``;
      return html`<rect class="${options.series[s]?.className ?? ''}" x="${x}" y="${y(base)}" width="${barWidth}" height="${y(from) - y(base)}"></rect>`;
    });
    // The newest bar keeps its label: the count runs back from the end.
    const labelled = (count - 1 - i) % labelEvery === 0;
    return html`<g><title>${point.title}</title>${bars}${
      labelled &&
      html`<text x="${x + barWidth / 2}" y="${frame.height - 9}" text-anchor="middle">${point.label}</text>`
    }</g>`;
  })}
</svg>`;
}

/** The legend and the chart, wide and narrow; `options.label` names it for screen readers. */
export function barChart(options: BarChartOptions): Html {
  return html`<div class="chart-frame">
  <p class="chart-legend subtle">${options.series.map(
    (series) =>
      html`<span class="legend-item"><span class="legend-swatch ${series.className}"></span> ${series.label}</span>`,
  )}</p>
  ${draw(options, WIDE, 'chart-wide')}
  ${draw(options, NARROW, 'chart-narrow')}
</div>`;
}
