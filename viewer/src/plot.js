// viewer/src/plot.js — a small line plotter on a 2D canvas: several series over a shared
// x axis, "nice" tick labels, a legend, optional log-scaled y, and a vertical cursor (the
// replay's current time) drawn over a cached image so that moving it costs one blit.

const MARGIN = { left: 52, right: 8, top: 8, bottom: 22 };

// Tick positions at 1, 2 or 5 × 10^k covering [low, high] with about `count` ticks.
export function niceTicks(low, high, count = 5) {
  if (!(high > low)) return [low];
  const rawStep = (high - low) / Math.max(1, count);
  const magnitude = Math.pow(10, Math.floor(Math.log10(rawStep)));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rawStep) ?? 10 * magnitude;
  const ticks = [];
  for (let t = Math.ceil(low / step) * step; t <= high + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

function formatTick(value) {
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e4 || magnitude < 1e-3) return value.toExponential(1);
  return String(Number(value.toPrecision(4)));
}

export class Plot {
  // options: { xLabel, logY }
  constructor(canvas, options = {}) {
    this.canvas = canvas;
    this.options = options;
    this.series = [];
    this.cursor = null;
    this.cache = document.createElement('canvas');
    this.message = '';
  }

  // series: [{ label, color, x: number[], y: number[] }]; values that are not finite are gaps.
  setSeries(series, message = '') {
    this.series = series;
    this.message = message;
    this.redraw();
  }

  setCursor(x) {
    this.cursor = x;
    this.blit();
  }

  // Data → pixel transforms for the current size and series.
  layout(width, height) {
    let xMin = Infinity, xMax = -Infinity, yMin = Infinity, yMax = -Infinity;
    const logY = this.options.logY && this.series.every((s) => s.y.every((v) => !Number.isFinite(v) || v > 0));
    for (const s of this.series) {
      for (let i = 0; i < s.x.length; ++i) {
        const x = s.x[i], y = logY ? Math.log10(s.y[i]) : s.y[i];
        if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
        xMin = Math.min(xMin, x); xMax = Math.max(xMax, x);
        yMin = Math.min(yMin, y); yMax = Math.max(yMax, y);
      }
    }
    if (!Number.isFinite(xMin)) { xMin = 0; xMax = 1; yMin = 0; yMax = 1; }
    if (xMax === xMin) { xMax = xMin + 1; }
    if (yMax - yMin < 1e-12 * Math.max(1, Math.abs(yMax))) { const pad = Math.max(1e-6, Math.abs(yMax) * 0.1); yMin -= pad; yMax += pad; }
    const pad = (yMax - yMin) * 0.05;
    yMin -= pad; yMax += pad;
    const plotWidth = width - MARGIN.left - MARGIN.right, plotHeight = height - MARGIN.top - MARGIN.bottom;
    return {
      logY, xMin, xMax, yMin, yMax,
      px: (x) => MARGIN.left + ((x - xMin) / (xMax - xMin)) * plotWidth,
      py: (y) => MARGIN.top + (1 - ((logY ? Math.log10(y) : y) - yMin) / (yMax - yMin)) * plotHeight,
    };
  }

  redraw() {
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(50, this.canvas.clientWidth), height = Math.max(40, this.canvas.clientHeight);
    this.canvas.width = this.cache.width = Math.round(width * ratio);
    this.canvas.height = this.cache.height = Math.round(height * ratio);
    const g = this.cache.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.fillStyle = '#fff';
    g.fillRect(0, 0, width, height);
    g.font = '10px system-ui, sans-serif';
    if (this.message || this.series.length === 0) {
      g.fillStyle = '#888';
      g.fillText(this.message || 'no data', MARGIN.left, height / 2);
      this.view = null;
      this.blit();
      return;
    }
    const view = this.layout(width, height);
    this.view = view;
    // Grid and tick labels.
    g.strokeStyle = '#eee';
    g.fillStyle = '#555';
    g.lineWidth = 1;
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (const tick of niceTicks(view.yMin, view.yMax, 4)) {
      const y = view.logY ? Math.pow(10, tick) : tick;
      const py = view.py(y);
      g.beginPath(); g.moveTo(MARGIN.left, py); g.lineTo(width - MARGIN.right, py); g.stroke();
      g.fillText(view.logY ? formatTick(y) : formatTick(tick), MARGIN.left - 4, py);
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    for (const tick of niceTicks(view.xMin, view.xMax, 5)) {
      const px = view.px(tick);
      g.beginPath(); g.moveTo(px, MARGIN.top); g.lineTo(px, height - MARGIN.bottom); g.stroke();
      g.fillText(formatTick(tick), px, height - MARGIN.bottom + 3);
    }
    if (this.options.xLabel) {
      g.textAlign = 'right';
      g.fillText(this.options.xLabel, width - MARGIN.right, height - 11);
    }
    g.strokeStyle = '#999';
    g.strokeRect(MARGIN.left, MARGIN.top, width - MARGIN.left - MARGIN.right, height - MARGIN.top - MARGIN.bottom);
    // Series, then the legend.
    g.lineWidth = 1.5;
    for (const s of this.series) {
      g.strokeStyle = s.color;
      g.beginPath();
      let pen = false;
      for (let i = 0; i < s.x.length; ++i) {
        const ok = Number.isFinite(s.x[i]) && Number.isFinite(s.y[i]) && (!view.logY || s.y[i] > 0);
        if (!ok) { pen = false; continue; }
        const px = view.px(s.x[i]), py = view.py(s.y[i]);
        if (pen) g.lineTo(px, py); else g.moveTo(px, py);
        pen = true;
      }
      g.stroke();
    }
    g.textAlign = 'left';
    g.textBaseline = 'top';
    let legendX = MARGIN.left + 6;
    for (const s of this.series) {
      g.fillStyle = s.color;
      g.fillRect(legendX, MARGIN.top + 6, 10, 3);
      g.fillStyle = '#333';
      g.fillText(s.label, legendX + 13, MARGIN.top + 2);
      legendX += 18 + g.measureText(s.label).width;
    }
    this.blit();
  }

  blit() {
    const g = this.canvas.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.drawImage(this.cache, 0, 0);
    if (this.cursor === null || !this.view) return;
    const ratio = window.devicePixelRatio || 1;
    const px = this.view.px(this.cursor);
    if (!(px >= MARGIN.left - 1)) return;
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.strokeStyle = '#d33';
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(px, MARGIN.top);
    g.lineTo(px, this.canvas.height / ratio - MARGIN.bottom);
    g.stroke();
  }
}
