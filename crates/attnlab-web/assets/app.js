// attnlab's page: a thin client. It sends requests (the CLI's options as JSON) to
// POST /api/<command> and draws the reports it gets back. It computes no number: every value
// shown is a field of a response, formatted like the CLI formats it (present::number).

// ---------------------------------------------------------------- the API

/** Commands the server knows (GET /api/commands), filled at start. */
const known = new Set();

/**
 * POST /api/<command> with `body`; resolves to the report (or, with `view`, the wrapped
 * {outcome, report, charts, text}); rejects with the server's one-line error message.
 */
export async function api(command, body, view = {}) {
  const q = [];
  if (view.charts) q.push('charts=svg');
  if (view.text) q.push('text=1');
  const url = '/api/' + command.split(' ').join('/') + (q.length ? '?' + q.join('&') : '');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  let data;
  try {
    data = await res.json();
  } catch (e) {
    throw new Error(`${command}: the server answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new Error(data.error || `${command}: HTTP ${res.status}`);
  return data;
}

// ------------------------------------------------------- number formatting
// The core's present::number, for display: shortest round-trip in [1e-4, 1e9), scientific
// outside; significant digits for measurements; scientific with d digits for errors.

function exp(s) { return s.replace('e+', 'e'); }
function trimZeros(s) {
  if (!s.includes('.')) return s;
  const [m, e] = s.split('e');
  const t = m.replace(/0+$/, '').replace(/\.$/, '');
  return e === undefined ? t : `${t}e${e}`;
}
function special(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return '0';
  return null;
}
export const fmt = {
  short(x) {
    const s = special(x); if (s) return s;
    const a = Math.abs(x);
    return a >= 1e-4 && a < 1e9 ? String(x) : exp(trimZeros(x.toExponential()));
  },
  sig(x, d = 4) {
    const s = special(x); if (s) return s;
    const r = Number(x.toPrecision(d));
    const e = Math.floor(Math.log10(Math.abs(r)));
    if (e >= -4 && e < 9) return trimZeros(r.toFixed(Math.max(0, d - 1 - e)));
    return exp(trimZeros(x.toExponential(d - 1)));
  },
  /** A whole number: all digits below 10⁹, else 4 significant digits. */
  count(x) { return Math.abs(x) < 1e9 ? String(x) : fmt.sci(x, 4); },
  sci(x, d = 4) {
    const s = special(x); if (s) return s;
    return exp(trimZeros(x.toExponential(d - 1)));
  },
};

// ------------------------------------------------------------ small DOM helpers

const $ = (id) => document.getElementById(id);
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
/** Replaces `el`'s children, skipping null/undefined/false entries. */
function put(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}
function debounce(fn, ms) {
  let t;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}
function showError(el, err) {
  if (!err) { el.hidden = true; el.textContent = ''; return; }
  el.hidden = false;
  el.textContent = err.message || String(err);
}
/** Runs only the latest of overlapping async updates. */
function latest(fn) {
  let ticket = 0;
  return async (...a) => {
    const mine = ++ticket;
    const result = await fn(...a);
    return mine === ticket ? result : undefined;
  };
}

// ------------------------------------------------------------------- heat maps

/** White → blue for weights; blue–white–red about 0 for signed values. */
function colour(v, scale) {
  if (!Number.isFinite(v)) return '#bbbbbb';
  if (scale.kind === 'sequential') {
    const t = scale.max > scale.min ? Math.min(1, Math.max(0, (v - scale.min) / (scale.max - scale.min))) : 0;
    const c = (a, b) => Math.round(a + (b - a) * t);
    return `rgb(${c(255, 23)},${c(255, 78)},${c(255, 166)})`;
  }
  const t = scale.max > 0 ? Math.max(-1, Math.min(1, v / scale.max)) : 0;
  const w = (a) => Math.round(255 * (1 - a));
  return t >= 0 ? `rgb(255,${w(t)},${w(t)})` : `rgb(${w(-t)},${w(-t)},255)`;
}
function textColour(v, scale) {
  const t = scale.kind === 'sequential'
    ? (scale.max > scale.min ? (v - scale.min) / (scale.max - scale.min) : 0)
    : Math.abs(scale.max > 0 ? v / scale.max : 0);
  return t > 0.55 ? '#ffffff' : '#111111';
}

/**
 * A matrix (from a report) as a table of coloured cells with their values (hover or focus a cell
 * to read its full value), row/column labels and a colour bar.
 */
function heatmap(matrix, { caption, rowLabel = 'row', colLabel = 'col', rowNames, colNames, highlight = new Set(), kind = 'sequential', id, shared }) {
  // `shared`: the other matrices drawn beside this one, so a pair uses one colour scale.
  const flat = [matrix, ...(shared || [])].flat(2).filter(Number.isFinite);
  const min = Math.min(...flat), max = Math.max(...flat);
  const scale = kind === 'sequential' ? { kind, min, max } : { kind, max: Math.max(...flat.map(Math.abs)) };
  const readout = h('div', { class: 'readout', 'aria-live': 'polite' });
  const table = h('table', { id, 'data-min': min, 'data-max': max },
    h('caption', {}, caption),
    h('tr', {}, h('th', { scope: 'col', text: `${rowLabel} \\ ${colLabel}` }),
      matrix[0].map((_, j) => h('th', { scope: 'col', text: colNames ? colNames[j] : String(j) }))),
    matrix.map((row, i) => h('tr', { class: highlight.has(i) ? 'hl' : null },
      h('th', { scope: 'row', text: rowNames ? rowNames[i] : String(i) }),
      row.map((v, j) => {
        const label = `${rowLabel} ${rowNames ? rowNames[i] : i}, ${colLabel} ${colNames ? colNames[j] : j}: ${fmt.short(v)}`;
        const td = h('td', {
          title: label, 'aria-label': label, tabindex: '-1', 'data-value': v,
          style: `background:${colour(v, scale)};color:${textColour(v, scale)}`,
        }, fmt.sig(v, 3));
        const show = () => { readout.textContent = label; };
        td.addEventListener('mouseenter', show);
        td.addEventListener('focus', show);
        return td;
      }))));
  const lo = scale.kind === 'sequential' ? scale.min : -scale.max;
  const hi = scale.kind === 'sequential' ? scale.max : scale.max;
  const gradient = scale.kind === 'sequential'
    ? `linear-gradient(to right, ${colour(lo, scale)}, ${colour(hi, scale)})`
    : `linear-gradient(to right, ${colour(lo, scale)}, #ffffff, ${colour(hi, scale)})`;
  const bar = h('div', { class: 'colourbar', 'aria-label': `colour scale from ${fmt.sig(lo, 3)} to ${fmt.sig(hi, 3)}` },
    h('span', { text: fmt.sig(lo, 3) }), h('span', { class: 'bar', style: `background:${gradient}` }), h('span', { text: fmt.sig(hi, 3) }));
  return h('div', { class: 'heat' }, table, bar, readout);
}

// --------------------------------------------------------------------- panels

function tabs() {
  const buttons = [...document.querySelectorAll('[role="tab"]')];
  const select = (b) => {
    for (const o of buttons) {
      const on = o === b;
      o.setAttribute('aria-selected', String(on));
      o.tabIndex = on ? 0 : -1;
      $(o.getAttribute('aria-controls')).hidden = !on;
    }
    b.focus();
    const panel = b.id.replace('tab-', '');
    if (panels[panel] && panels[panel].shown) panels[panel].shown();
  };
  buttons.forEach((b, i) => {
    b.addEventListener('click', () => select(b));
    b.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowRight') select(buttons[(i + 1) % buttons.length]);
      if (e.key === 'ArrowLeft') select(buttons[(i + buttons.length - 1) % buttons.length]);
    });
  });
}

/** A note in place of a panel whose command this server does not have. */
function unavailable(el, commands) {
  el.replaceChildren(h('p', { class: 'unavailable' },
    `This panel needs ${commands.map((c) => `attnlab ${c}`).join(', ')}, which this build of the server does not offer yet (GET /api/commands lists what it does).`));
}

// ----------------------------------------------------------------- shuffle

const shuffle = {
  tokens: [],   // the original tokens
  order: [],    // order[i] = which original position sits at position i (numpy's perm)

  init() {
    $('shuffle-text').addEventListener('input', debounce(() => this.setText(), 250));
    for (const id of ['shuffle-pos', 'shuffle-mask', 'shuffle-layer', 'shuffle-dtype', 'shuffle-rng']) {
      $(id).addEventListener('change', () => this.update());
    }
    for (const id of ['shuffle-scale', 'shuffle-seed']) $(id).addEventListener('input', debounce(() => this.update(), 250));
    $('shuffle-blocks').addEventListener('input', debounce(() => this.update(), 400));
    $('shuffle-shuffle').addEventListener('click', () => this.shuffle());
    $('shuffle-reset').addEventListener('click', () => { this.order = this.tokens.map((_, i) => i); this.draw(); this.update(); });
    this.setText();
  },

  setText() {
    this.tokens = $('shuffle-text').value.trim().split(/\s+/).filter(Boolean);
    this.order = this.tokens.map((_, i) => i);
    this.draw();
    this.update();
  },

  /** Picks up an edit of the sequence the debounce has not delivered yet. */
  syncText() {
    const now = $('shuffle-text').value.trim().split(/\s+/).filter(Boolean);
    if (now.join(' ') !== this.tokens.join(' ')) this.setText();
  },

  shuffle() {
    this.syncText();
    const n = this.order.length;
    if (n < 2) return;
    const start = this.order.join(',');
    do {
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [this.order[i], this.order[j]] = [this.order[j], this.order[i]];
      }
    } while (this.order.join(',') === start);
    this.draw();
    this.update();
  },

  move(from, to) {
    if (to < 0 || to >= this.order.length || from === to) return;
    const [x] = this.order.splice(from, 1);
    this.order.splice(to, 0, x);
    this.draw(to);
    this.update();
  },

  draw(focus) {
    const list = $('shuffle-tokens');
    list.replaceChildren(...this.order.map((orig, i) => {
      const li = h('li', {
        tabindex: '0', draggable: 'true', 'data-index': i,
        class: orig !== i ? 'moved' : null,
        'aria-label': `position ${i}: ${this.tokens[orig]}, from position ${orig}`,
      }, h('span', { class: 'tok', text: this.tokens[orig] }), h('span', { class: 'from', text: `from ${orig}` }));
      li.addEventListener('keydown', (e) => {
        if (e.key === 'ArrowLeft') { e.preventDefault(); this.move(i, i - 1); }
        if (e.key === 'ArrowRight') { e.preventDefault(); this.move(i, i + 1); }
      });
      li.addEventListener('dragstart', (e) => { e.dataTransfer.setData('text/plain', String(i)); li.classList.add('dragging'); });
      li.addEventListener('dragend', () => li.classList.remove('dragging'));
      li.addEventListener('dragover', (e) => e.preventDefault());
      li.addEventListener('drop', (e) => { e.preventDefault(); this.move(Number(e.dataTransfer.getData('text/plain')), i); });
      return li;
    }));
    $('shuffle-perm').textContent = `[${this.order.join(', ')}]`;
    if (focus !== undefined && list.children[focus]) list.children[focus].focus();
  },

  /** The options every request of this panel shares. */
  base() {
    const body = {
      pos: $('shuffle-pos').value,
      mask: $('shuffle-mask').value,
      dtype: $('shuffle-dtype').value,
      rng: $('shuffle-rng').value,
    };
    const seed = $('shuffle-seed').value.trim();
    if (seed !== '') body.seed = Number(seed);
    $('shuffle-scale-field').hidden = body.pos !== 'index';
    if (body.pos === 'index' && $('shuffle-scale').value.trim() !== '') body.index_scale = Number($('shuffle-scale').value);
    const blocks = $('shuffle-blocks').value.trim();
    if (blocks) {
      try { body.blocks = JSON.parse(blocks); } catch (e) { throw new Error(`blocks: not valid JSON (${e.message})`); }
    }
    return body;
  },

  update: latest(async function () { return shuffle.run(); }),

  async run() {
    const err = $('shuffle-error');
    let base;
    try { base = this.base(); } catch (e) { showError(err, e); return; }
    const layer = $('shuffle-layer').value;
    const text = this.tokens.join(' ');
    const permuted = this.order.map((o) => this.tokens[o]).join(' ');
    const jobs = [api('equivariance', { ...base, text, layer, perm: this.order }, { text: true })];
    if (layer === 'attention') {
      jobs.push(api('attend', { ...base, text }), api('attend', { ...base, text: permuted }));
    }
    let results;
    try {
      results = await Promise.all(jobs);
    } catch (e) {
      showError(err, e);
      put($('shuffle-verdict'), );
      put($('shuffle-weights'), );
      put($('shuffle-outputs'), );
      return;
    }
    showError(err, null);
    const [eq, a, b] = results;
    this.verdict(eq.report);
    $('shuffle-text-out').textContent = eq.text;
    if (a && b) this.maps(a, b);
    else {
      put($('shuffle-weights'), h('p', { class: 'hint' }, 'An RNN has no attention weights: it reads the sequence in order, one step at a time, so only the verdict above applies.'));
      put($('shuffle-outputs'), );
    }
    return results;
  },

  verdict(r) {
    const moved = this.order.filter((o, i) => o !== i).length;
    const rows = [
      ['equation', r.equation],
      ['max abs error', fmt.sci(r.max_abs_error)],
      ['tolerance', fmt.sci(r.tolerance)],
      ['margin (error ÷ tolerance; below 1 holds)', fmt.sig(r.margin, 4)],
      ['max ulps', fmt.count(r.max_ulps)],
      ['worst entry (row, col)', `${r.worst.row}, ${r.worst.col}`],
    ];
    if (r.weight_form) rows.push(['weights: ' + r.weight_form.equation, `${r.weight_form.verdict}, margin ${fmt.sig(r.weight_form.margin, 4)}`]);
    put($('shuffle-verdict'), 
      h('p', { class: 'headline' },
        h('span', { class: `badge ${r.verdict}`, id: 'shuffle-badge', 'data-verdict': r.verdict }, r.verdict.toUpperCase()), ' ',
        `${r.equation} — layer ${r.layer}, positions ${r.pos}, mask ${r.mask}, ${r.dtype}, n = ${r.n}, d = ${r.dim}; ${moved} of ${r.n} positions moved.`),
      h('table', { class: 'numbers', id: 'shuffle-numbers' },
        rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row', text: k }), h('td', { class: 'num', text: v, 'data-field': k })))),
      ...(r.note ? [h('p', { class: 'hint', text: r.note })] : []));
    const rope = r.pos === 'rope' ? ' Rotary: half-split pairing (dimension i with i + d/2), base 10000.' : '';
    $('shuffle-conventions').textContent = `Conventions: positions are 0-based; a permutation is numpy's X[perm] (row i of the shuffled input is row perm[i] of the original); heat-map rows are queries (positions), columns keys; dtype ${r.dtype}.${rope}`;
  },

  maps(a, b) {
    const moved = new Set(this.order.map((o, i) => (o !== i ? i : -1)).filter((i) => i >= 0));
    const names = (r) => (r.tokens ? r.tokens.map((t, i) => `${i} ${t}`) : null);
    const fromNames = (r) => (r.tokens ? r.tokens.map((t, i) => `${i} ${t} ←${this.order[i]}`) : null);
    put($('shuffle-weights'), 
      h('figcaption', {}, 'Attention weights A (each row sums to 1)'),
      h('div', { class: 'side' },
        heatmap(a.weights, { id: 'weights-original', caption: 'original input: A(X)', rowLabel: 'query', colLabel: 'key', rowNames: names(a), colNames: names(a), shared: [b.weights] }),
        heatmap(b.weights, { id: 'weights-permuted', caption: 'shuffled input: A(ΠX)', rowLabel: 'query', colLabel: 'key', rowNames: fromNames(b), colNames: names(b), highlight: moved, shared: [a.weights] })));
    put($('shuffle-outputs'), 
      h('figcaption', {}, 'Output rows f (moved rows highlighted; “←k” = came from position k)'),
      h('div', { class: 'side' },
        heatmap(a.output, { id: 'output-original', caption: 'original input: f(X)', rowLabel: 'position', colLabel: 'dim', rowNames: names(a), kind: 'diverging', shared: [b.output] }),
        heatmap(b.output, { id: 'output-permuted', caption: 'shuffled input: f(ΠX)', rowLabel: 'position', colLabel: 'dim', rowNames: fromNames(b), kind: 'diverging', highlight: moved, shared: [a.output] })));
  },
};

// ------------------------------------------------------------------- start

const panels = { shuffle };

async function start() {
  tabs();
  try {
    const res = await fetch('/api/commands');
    const info = await res.json();
    for (const c of info.commands) known.add(c.name);
  } catch (e) { /* the panels say what is missing */ }
  shuffle.init();
  for (const [name, panel] of Object.entries(extraPanels)) {
    panels[name] = panel;
    const missing = panel.needs.filter((c) => !known.has(c));
    if (missing.length) unavailable($(`${name}-body`), missing);
    else panel.init();
  }
  document.body.dataset.ready = 'true';
}

// Panels defined below register here.
const extraPanels = {};
export function register(name, panel) { extraPanels[name] = panel; }

/** A chart rendered by the server (attnlab-render's SVG, the CLI's figure) as an image. */
function svgFigure(chart) {
  const img = h('img', {
    src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(chart.svg),
    alt: chart.title, 'data-chart': chart.name,
  });
  return h('figure', {}, img, h('figcaption', { text: chart.title }));
}

/** The wrapped answer (?charts=svg&text=1): outcome, the terminal's text, the charts. */
function reportView(answer, label) {
  return [
    h('p', { class: 'headline' }, h('span', { class: `badge ${answer.outcome}`, 'data-outcome': answer.outcome }, answer.outcome.toUpperCase()), ' ', label),
    answer.charts && answer.charts.length ? h('div', { class: 'charts' }, answer.charts.map(svgFigure)) : null,
    h('pre', { class: 'report-text', text: answer.text }),
    h('details', {}, h('summary', { text: 'JSON (as attnlab … --json prints it)' }), h('pre', { text: JSON.stringify(answer.report, null, 2) })),
  ];
}

register('console', {
  needs: [],
  init() {
    const select = $('console-command');
    select.replaceChildren(...[...known].map((c) => h('option', { value: c, text: c })));
    const run = async () => {
      const err = $('console-error');
      let body;
      try { body = JSON.parse($('console-body').value || '{}'); } catch (e) { showError(err, new Error(`request: not valid JSON (${e.message})`)); return; }
      try {
        const answer = await api(select.value, body, { charts: true, text: true });
        showError(err, null);
        put($('console-out'), ...reportView(answer, `attnlab ${select.value}`).filter(Boolean));
      } catch (e) {
        showError(err, e);
        put($('console-out'), );
      }
    };
    $('console-run').addEventListener('click', run);
    $('console-body').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) run(); });
  },
});

// ---------------------------------------------------------------- line charts (page-drawn)

const SVGNS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const c of children.flat()) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#17becf'];

/** Ticks for [lo, hi]: about `n` round values (1, 2, 5 × 10^k steps) — axis labels, not results. */
function ticks(lo, hi, n = 6) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((v) => v >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

/**
 * A line chart of report data: series [{name, points: [[x, y]], dashed}], vertical marks
 * [{x, label, colour}]; returns an <svg> that scales with its box.
 */
function lineChart({ series, marks = [], xLabel, yLabel, id }) {
  const W = 820, H = 360, L = 58, R = 16, T = 14, B = 46;
  const xs = series.flatMap((s) => s.points.map((p) => p[0])).concat(marks.map((m) => m.x));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  let y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (y1 - y0 < 1e-12) { y0 -= 0.5; y1 += 0.5; }
  const pad = (y1 - y0) * 0.06; y0 -= pad; y1 += pad;
  const X = (x) => L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R);
  const Y = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  const el = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img', id, 'aria-label': `${yLabel} vs ${xLabel}` });
  for (const t of ticks(y0, y1)) {
    el.append(svg('line', { x1: L, x2: W - R, y1: Y(t), y2: Y(t), stroke: '#e6e6e6' }),
      svg('text', { x: L - 6, y: Y(t) + 4, 'text-anchor': 'end' }, fmt.sig(t, 3)));
  }
  for (const t of ticks(x0, x1, 10).filter((v) => Number.isInteger(v) || x1 - x0 < 10)) {
    el.append(svg('line', { x1: X(t), x2: X(t), y1: H - B, y2: H - B + 5, stroke: '#666' }),
      svg('text', { x: X(t), y: H - B + 18, 'text-anchor': 'middle' }, fmt.short(t)));
  }
  el.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#666' }),
    svg('line', { x1: L, x2: L, y1: T, y2: H - B, stroke: '#666' }),
    svg('text', { x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle' }, xLabel),
    svg('text', { x: 14, y: (T + H - B) / 2, transform: `rotate(-90 14 ${(T + H - B) / 2})`, 'text-anchor': 'middle' }, yLabel));
  for (const m of marks) {
    el.append(svg('line', { x1: X(m.x), x2: X(m.x), y1: T, y2: H - B, stroke: m.colour || '#555', 'stroke-dasharray': m.solid ? null : '5 4', 'stroke-width': m.solid ? 3 : 1.5, 'data-mark': m.kind || 'mark', 'data-x': m.x }),
      svg('text', { x: X(m.x) + 4, y: T + 12 + (m.row || 0) * 14, fill: m.colour || '#555' }, m.label));
  }
  series.forEach((s, i) => {
    const c = s.colour || PALETTE[i % PALETTE.length];
    const d = s.points.map((p, k) => `${k ? 'L' : 'M'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join('');
    el.append(svg('path', { d, fill: 'none', stroke: c, 'stroke-width': s.bold ? 3 : 2, 'stroke-dasharray': s.dashed ? '6 4' : null }));
    if (s.points.length <= 80) for (const p of s.points) el.append(svg('circle', { cx: X(p[0]), cy: Y(p[1]), r: 2.6, fill: c }));
    el.append(svg('text', { x: W - R - 4, y: T + 14 + i * 15, 'text-anchor': 'end', fill: c }, s.name));
  });
  return el;
}

// ---------------------------------------------------------------- rotation

register('rotation', {
  needs: ['rope score', 'rope period', 'rope identity'],
  score: null,
  periods: [],
  init() {
    $('rotation-omega').addEventListener('input', debounce(() => this.update(), 350));
    $('rotation-max').addEventListener('input', debounce(() => this.update(), 350));
    $('rotation-s').addEventListener('input', () => this.draw());
    this.update();
  },
  update: latest(async function () { return panels.rotation.run(); }),
  async run() {
    const err = $('rotation-error');
    const omega = $('rotation-omega').value;
    const maxSep = Number($('rotation-max').value);
    try {
      const score = await api('rope score', { omega, max_sep: maxSep });
      const periods = await Promise.all(score.omegas.map((o) => api('rope period', { omega: o.label })));
      const identity = await api('rope identity', { omega, trials: 200 }, { charts: true });
      showError(err, null);
      this.score = score; this.periods = periods; this.identity = identity;
    } catch (e) {
      showError(err, e);
      return;
    }
    const slider = $('rotation-s');
    slider.max = String(this.score.separations.length - 1);
    if (Number(slider.value) > Number(slider.max)) slider.value = slider.max;
    this.draw();
    this.drawIdentity();
  },
  draw() {
    if (!this.score) return;
    const r = this.score;
    const s = Number($('rotation-s').value);
    $('rotation-s-out').textContent = String(s);
    const row = r.separations[s];
    const likeZero = s > 0 && r.equal_to_zero_separation.includes(s);
    put($('rotation-readout'), 
      h('table', { class: 'numbers', id: 'rotation-table' },
        h('tr', {}, h('th', { text: 'ω' }), h('th', { text: `cos(${s}·ω)` }), h('th', { text: 'first repeat (exact)' }), h('th', { text: 'wavelength 2π/ω' })),
        r.omegas.map((o, k) => {
          const p = this.periods[k];
          return h('tr', {}, h('td', { text: o.label }), h('td', { class: 'num', 'data-omega': o.label, text: fmt.sig(row.scores[k], 6) }),
            h('td', { class: 'num', 'data-repeat': o.label, text: p.first_repeat === null ? `none (irrational; within ${fmt.short(p.tol)} rad at ${p.first_within_tol ?? '—'})` : String(p.first_repeat) }),
            h('td', { class: 'num', text: fmt.sig(p.wavelength, 6) }));
        }),
        h('tr', {}, h('th', { text: 'mean' }), h('td', { class: 'num', id: 'rotation-mean', text: fmt.sig(row.mean, 6) }),
          h('td', { colspan: '2', text: likeZero ? `s = ${s} scores like s = 0 (every phase within ${fmt.short(r.tolerance)} rad of a full turn)` : (r.equal_to_zero_separation.length ? `the set repeats at s = ${r.equal_to_zero_separation.join(', ')}` : `no separation in 1..${r.separations.length - 1} scores like s = 0`) }))));
    const series = [];
    if (r.omegas.length <= 5) r.omegas.forEach((o, k) => series.push({ name: `ω = ${o.label}`, points: r.separations.map((x) => [x.separation, x.scores[k]]) }));
    series.push({ name: `mean over ${r.omegas.length} planes`, points: r.separations.map((x) => [x.separation, x.mean]), bold: true, colour: '#111' });
    const last = r.separations.length - 1;
    const marks = this.periods.map((p, k) => (p.first_repeat !== null && p.first_repeat <= last
      ? { x: p.first_repeat, label: `ω = ${r.omegas[k].label} repeats`, colour: PALETTE[k % PALETTE.length], row: k, kind: 'repeat' } : null)).filter(Boolean);
    marks.push({ x: s, label: `s = ${s}`, colour: '#ff8c00', solid: true, row: marks.length, kind: 'slider' });
    put($('rotation-chart'), lineChart({ series, marks, xLabel: 'separation s = j − i', yLabel: 'score cos(s·ω)', id: 'rotation-plot' }));
  },
  drawIdentity() {
    const a = this.identity, r = a.report;
    const [i, j] = r.worst_positions;
    const pipelines = r.invariance.length ? Object.keys(r.invariance[0].errors) : [];
    put($('rotation-identity'), 
      h('p', { class: 'headline' }, h('span', { class: `badge ${r.holds ? 'holds' : 'breaks'}`, id: 'identity-badge', 'data-holds': String(r.holds) }, r.holds ? 'HOLDS' : 'BREAKS'), ' ',
        `over ${r.trials} random (q, k, i, j) in f64, ${r.planes} planes`),
      h('table', { class: 'numbers', id: 'identity-numbers' },
        h('tr', {}, h('th', { text: 'max |(R(iω)q)ᵀ(R(jω)k) − qᵀR((j−i)ω)k|' }), h('td', { class: 'num', 'data-field': 'max_abs_error', text: fmt.sci(r.max_abs_error) })),
        h('tr', {}, h('th', { text: 'tolerance' }), h('td', { class: 'num', 'data-field': 'tolerance', text: fmt.sci(r.tolerance) })),
        h('tr', {}, h('th', { text: 'largest error ÷ its tolerance' }), h('td', { class: 'num', text: fmt.sig(r.max_error_ratio, 4) })),
        h('tr', {}, h('th', { text: 'worst case at positions (i, j)' }), h('td', { class: 'num', text: `${i}, ${j} (j − i = ${j - i})` }))),
      h('p', { class: 'hint', text: r.tolerance_rule }),
      h('h3', { text: 'Translation invariance: shifting both positions by t, per dtype pipeline' }),
      h('p', { class: 'hint', text: r.pipelines }),
      a.charts.length ? h('div', { class: 'charts' }, a.charts.map(svgFigure)) : null,
      h('details', {}, h('summary', { text: 'The table (error per shift and pipeline)' }),
        h('table', { class: 'numbers', id: 'invariance-table' },
          h('tr', {}, h('th', { text: 'shift t' }), pipelines.map((p) => h('th', { text: p }))),
          r.invariance.map((row) => h('tr', {}, h('td', { class: 'num', text: String(row.shift) }), pipelines.map((p) => h('td', { class: 'num', text: fmt.sci(row.errors[p], 3) })))))));
  },
});

// ---------------------------------------------------------------- resolution & audit

register('audit', {
  needs: ['rope audit'],
  async init() {
    try {
      const res = await fetch('/api/presets');
      const list = await res.json();
      put($('audit-preset'), ...list.map((p) => h('option', { value: p.name, text: `${p.name} (${p.source})` })));
    } catch (e) { showError($('audit-error'), e); }
    for (const r of document.querySelectorAll('input[name="audit-source"]')) {
      r.addEventListener('change', () => {
        for (const f of document.querySelectorAll('[data-source]')) f.hidden = f.dataset.source !== this.source();
      });
    }
    $('audit-run').addEventListener('click', () => this.run());
  },
  source() { return document.querySelector('input[name="audit-source"]:checked').value; },
  body() {
    const body = { dtype: $('audit-dtype').value };
    const ctx = $('audit-context').value.trim();
    if (ctx) body.context = ctx;
    switch (this.source()) {
      case 'preset': body.preset = $('audit-preset').value; break;
      case 'config':
        try { body.config = JSON.parse($('audit-config').value); } catch (e) { throw new Error(`config.json: not valid JSON (${e.message})`); }
        break;
      case 'base': body.base = Number($('audit-base').value); body.dim = $('audit-dim').value.trim(); break;
      default: body.omega = $('audit-omega').value;
    }
    return body;
  },
  async run() {
    const err = $('audit-error');
    let body;
    try { body = this.body(); } catch (e) { showError(err, e); return; }
    $('audit-run').disabled = true;
    $('audit-status').textContent = 'Auditing… (the minimum-base search can take seconds)';
    try {
      const a = await api('rope audit', body, { charts: true, text: true });
      showError(err, null);
      this.show(a);
      $('audit-status').textContent = '';
    } catch (e) {
      showError(err, e);
      put($('audit-out'), );
      $('audit-status').textContent = '';
    } finally {
      $('audit-run').disabled = false;
    }
  },
  show(a) {
    const r = a.report, f = r.findings;
    const rows = [];
    const add = (what, ok, text) => rows.push(h('tr', { 'data-finding': what },
      h('th', { scope: 'row', text: what }),
      h('td', {}, ok === null ? '' : h('span', { class: `badge ${ok ? 'holds' : 'breaks'}`, text: ok ? 'ok' : 'note' })),
      h('td', { text })));
    add('full turns', null, `${f.turns.full_turn} of ${f.turns.planes} planes turn fully within ${f.context} positions; wavelengths ${fmt.sig(f.turns.wavelength_min, 4)} to ${fmt.sig(f.turns.wavelength_max, 4)}`);
    if (f.resolution) add('resolution', f.resolution.kind === 'resolves', `${f.resolution.kind}; closest call at separation ${f.resolution.closest_separation ?? '—'}, margin ${f.resolution.margin === null || f.resolution.margin === undefined ? '—' : fmt.sig(f.resolution.margin, 4)} rad`);
    if (f.decay) add('decay (Men et al. 2024)', f.decay.kind !== 'fails', `${f.decay.kind}${f.decay.first_negative !== null && f.decay.first_negative !== undefined ? `; B(m) first negative at m = ${f.decay.first_negative}` : ''}`);
    if (f.min_base) add('smallest base for this context', null, `${fmt.sig(f.min_base.base, 6)}${f.min_base.configured ? ` (configured ${fmt.sig(f.min_base.configured.base, 6)}, ${fmt.sig(f.min_base.configured.ratio, 4)} of it)` : ''}`);
    if (f.precision) add(`precision (${f.precision.dtype})`, null, `${f.precision.distinct_positions} of ${f.context} position ids distinct (exact up to ${f.precision.exact_up_to}); cos/sin cache rows distinct: ${f.precision.distinct_rows}`);
    if (f.invariance) add(`translation invariance (${f.invariance.pipeline})`, null, `a shift by ${f.invariance.first_shift} changes a score by up to ${fmt.sci(f.invariance.first_error, 4)}; worst ${fmt.sci(f.invariance.worst_error, 4)} at shift ${f.invariance.worst_shift} (exact reduction: ${fmt.sci(f.invariance.exact_error, 4)})`);
    put($('audit-out'), 
      h('p', { class: 'verdict-text', id: 'audit-verdict', text: r.verdict }),
      h('p', { class: 'hint', id: 'audit-source-line', text: `${r.source}; context ${r.context}; verdict dtype ${r.dtype}` }),
      h('div', { class: 'charts', id: 'audit-charts' }, a.charts.map(svgFigure)),
      h('h3', { text: 'Findings' }),
      h('table', { class: 'numbers findings', id: 'audit-findings' }, rows),
      r.config_notes.length ? h('ul', { class: 'hint' }, r.config_notes.map((n) => h('li', { text: n }))) : null,
      h('details', { class: 'terminal' }, h('summary', { text: 'As the terminal prints it (attnlab rope audit)' }), h('pre', { text: a.text })));
  },
});

// ---------------------------------------------------------------- session

/** A prediction or result ({kind, value}) as the student typed or the engine measured it. */
function answerText(a) {
  if (!a || typeof a !== 'object') return String(a);
  const v = a.value;
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'number' ? fmt.short(x) : String(x))).join(', ');
  if (typeof v === 'number') return fmt.short(v);
  return String(v);
}

/** One evidence item (typed data of any kind) as “kind: field value, …”. */
function evidenceText(e) {
  const show = (v) => {
    if (v === null || v === undefined) return '—';
    if (typeof v === 'number') return fmt.short(v);
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
    if (typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k.replace(/_/g, ' ')} ${show(x)}`).join(', ')}}`;
    return String(v);
  };
  const { kind, ...rest } = e;
  return `${String(kind).replace(/_/g, ' ')}: ${Object.entries(rest).map(([k, v]) => `${k.replace(/_/g, ' ')} ${show(v)}`).join(', ')}`;
}

register('session', {
  needs: ['session'],
  steps: [],
  answers: {},   // step id → {answer, reason}: the answers document of this sitting
  base: null,    // a state file loaded from the terminal, if any
  last: null,    // the latest run report
  async init() {
    try {
      this.steps = (await api('session', { list: true })).steps;
      const saved = JSON.parse(localStorage.getItem('attnlab-session') || 'null');
      if (saved) { this.answers = saved.answers || {}; this.base = saved.base || null; }
    } catch (e) { showError($('session-error'), e); return; }
    $('session-download').addEventListener('click', () => this.download('attnlab-answers.json', this.answers));
    $('session-download-state').addEventListener('click', () => this.download('session.json', { ...this.base, records: this.last.steps }));
    $('session-restart').addEventListener('click', () => { this.answers = {}; this.base = null; this.save(); this.run(); });
    $('session-load').addEventListener('change', (e) => this.load(e.target.files[0]));
    await this.run();
  },
  save() { localStorage.setItem('attnlab-session', JSON.stringify({ answers: this.answers, base: this.base })); },
  download(name, data) {
    const a = h('a', { href: URL.createObjectURL(new Blob([JSON.stringify(data, null, 2) + '\n'], { type: 'application/json' })), download: name });
    document.body.append(a); a.click(); a.remove();
  },
  async load(file) {
    if (!file) return;
    try {
      this.base = JSON.parse(await file.text());
      this.answers = {};
      await this.run();
      this.save();
    } catch (e) { showError($('session-error'), new Error(`progress file: ${e.message}`)); this.base = null; }
  },
  /** Runs the session engine on the answers so far (and the loaded progress). */
  async run(graded) {
    const body = { answers: this.answers };
    if (this.base) body.state = this.base;
    let a;
    try {
      a = await api('session', body, { text: true });
      showError($('session-error'), null);
    } catch (e) {
      showError($('session-error'), e);
      return;
    }
    const r = a.report;
    this.last = r;
    $('session-download-state').hidden = !this.base;
    $('session-score').textContent = `score ${r.score.correct} of ${r.score.answered} answered (${r.score.total} steps)`;
    $('session-score').dataset.correct = r.score.correct;
    $('session-score').dataset.answered = r.score.answered;
    if (graded) this.showRecord(r.steps.find((s) => s.id === graded), a.text);
    if (r.complete) {
      put($('session-step'), h('p', { class: 'headline', id: 'session-done' },
        h('span', { class: `badge ${r.full_marks ? 'holds' : 'fails'}` }, r.full_marks ? 'FULL MARKS' : 'COMPLETE'),
        ` ${r.score.correct} of ${r.score.total} predictions right.`));
      return;
    }
    // The next step to predict: the first the answers do not cover yet (in course order).
    const next = (r.missing && r.missing[0]) || (r.paused && r.paused.step);
    this.showStep(this.steps.find((s) => s.id === next));
  },
  showStep(step) {
    if (!step) return;
    const n = this.steps.indexOf(step) + 1;
    const form = step.answer_kind || {};
    let input;
    if (form.kind === 'yes_no') {
      input = h('div', { role: 'radiogroup', 'aria-label': 'your prediction', class: 'buttons' },
        ['yes', 'no'].map((v) => h('label', {}, h('input', { type: 'radio', name: 'session-answer', value: v }), ` ${v}`)));
    } else if (form.kind === 'choice') {
      input = h('div', { role: 'radiogroup', 'aria-label': 'your prediction' },
        form.options.map((o) => h('p', {}, h('label', {}, h('input', { type: 'radio', name: 'session-answer', value: o.key }), ` ${o.key}) ${o.text}`))));
    } else {
      input = h('input', { type: 'text', id: 'session-answer-text', 'aria-label': 'your prediction', autocomplete: 'off', spellcheck: 'false' });
    }
    const hint = h('p', { class: 'hint', id: 'session-hint', hidden: true, text: step.hint });
    put($('session-step'),
      h('h3', { id: 'session-title', 'data-step': step.id }, `Step ${n} of ${this.steps.length}: ${step.title}`),
      h('p', {}, h('strong', { text: 'Varied: ' }), step.varied, ' · ', h('strong', { text: 'held fixed: ' }), step.fixed),
      h('p', { id: 'session-question', text: step.question }),
      h('form', { id: 'session-form' },
        h('p', { class: 'hint', text: `Answer: ${step.answer_form}` }),
        input,
        h('p', {}, h('label', { for: 'session-reason', text: 'Why? (optional, kept with your answer)' })),
        h('input', { type: 'text', id: 'session-reason', autocomplete: 'off' }),
        h('div', { class: 'buttons', style: 'margin-top:.5rem' },
          h('button', { type: 'submit', class: 'primary', id: 'session-submit' }, 'Predict, then run'),
          step.hint ? h('button', { type: 'button', onclick: () => { hint.hidden = false; } }, 'Show a hint') : null),
        hint));
    $('session-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      const picked = document.querySelector('input[name="session-answer"]:checked');
      const answer = picked ? picked.value : ($('session-answer-text') ? $('session-answer-text').value.trim() : '');
      if (!answer) { showError($('session-error'), new Error('type or pick a prediction first')); return; }
      const reason = $('session-reason').value.trim();
      this.answers[step.id] = reason ? { answer, reason } : { answer };
      await this.run(step.id);
      if ($('session-error').hidden) this.save(); else delete this.answers[step.id];
    });
  },
  showRecord(rec, text) {
    if (!rec) return;
    put($('session-result'),
      h('div', { class: 'step', id: 'session-record', 'data-correct': String(rec.correct) },
        h('p', { class: 'headline' }, h('span', { class: `badge ${rec.correct ? 'holds' : 'fails'}` }, rec.correct ? 'RIGHT' : 'NOT QUITE'), ` ${rec.title}`),
        h('table', { class: 'numbers' },
          h('tr', {}, h('th', { text: 'your prediction' }), h('td', { id: 'session-prediction', text: answerText(rec.prediction) })),
          h('tr', {}, h('th', { text: 'computed' }), h('td', { id: 'session-computed', text: answerText(rec.result) })),
          h('tr', {}, h('th', { text: 'graded by' }), h('td', { text: rec.grading }))),
        h('p', { text: rec.explanation }),
        h('details', {}, h('summary', { text: 'Evidence (what the engine computed)' }),
          h('ul', { class: 'findings' }, rec.evidence.map((e) => h('li', { class: 'mono', text: evidenceText(e) })))),
        h('details', { class: 'terminal' }, h('summary', { text: 'As the terminal prints the session so far' }), h('pre', { text }))));
  },
});

window.addEventListener('DOMContentLoaded', start);
