/**
 * A rolling line chart (uPlot): points are appended as reads arrive and the oldest drop out
 * past `keep` seconds. The chart lives as long as its page is shown.
 */
import uPlot from 'uplot';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#be185d', '#4b5563'];

export class LiveChart {
  private readonly plot: uPlot;
  private readonly data: number[][];

  constructor(
    el: HTMLElement,
    title: string,
    series: string[],
    private readonly keep = 300,
    unit = '',
  ) {
    this.data = [[], ...series.map(() => [])];
    const width = Math.max(320, Math.min(el.clientWidth || 600, 900));
    this.plot = new uPlot(
      {
        title,
        width,
        height: 180,
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, vals) => vals.map((v) => `${v}${unit}`), size: 60 }],
        series: [{}, ...series.map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 1.5 }))],
      },
      this.data as uPlot.AlignedData,
      el,
    );
  }

  /** One point per series at `atMs`. */
  push(atMs: number, values: number[]): void {
    const t = atMs / 1000;
    (this.data[0] as number[]).push(t);
    for (let i = 0; i < values.length; i++) this.data[i + 1]?.push(values[i] as number);
    while ((this.data[0]?.length ?? 0) > 0 && t - (this.data[0]?.[0] as number) > this.keep) for (const d of this.data) d.shift();
    this.plot.setData(this.data as uPlot.AlignedData);
  }

  destroy(): void {
    this.plot.destroy();
  }
}
