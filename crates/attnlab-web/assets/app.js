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
function heatmap(matrix, { caption, rowLabel = 'row', colLabel = 'col', rowNames, colNames, highlight = new Set(), kind = 'sequential', id }) {
  const flat = matrix.flat().filter(Number.isFinite);
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
      $('shuffle-verdict').replaceChildren();
      $('shuffle-weights').replaceChildren();
      $('shuffle-outputs').replaceChildren();
      return;
    }
    showError(err, null);
    const [eq, a, b] = results;
    this.verdict(eq.report);
    $('shuffle-text-out').textContent = eq.text;
    if (a && b) this.maps(a, b);
    else {
      $('shuffle-weights').replaceChildren(h('p', { class: 'hint' }, 'An RNN has no attention weights: it reads the sequence in order, one step at a time, so only the verdict above applies.'));
      $('shuffle-outputs').replaceChildren();
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
    $('shuffle-verdict').replaceChildren(
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
    $('shuffle-weights').replaceChildren(
      h('figcaption', {}, 'Attention weights A (each row sums to 1)'),
      h('div', { class: 'side' },
        heatmap(a.weights, { id: 'weights-original', caption: 'original input: A(X)', rowLabel: 'query', colLabel: 'key', rowNames: names(a), colNames: names(a) }),
        heatmap(b.weights, { id: 'weights-permuted', caption: 'shuffled input: A(ΠX)', rowLabel: 'query', colLabel: 'key', rowNames: fromNames(b), colNames: names(b), highlight: moved })));
    $('shuffle-outputs').replaceChildren(
      h('figcaption', {}, 'Output rows f (moved rows highlighted; “←k” = came from position k)'),
      h('div', { class: 'side' },
        heatmap(a.output, { id: 'output-original', caption: 'original input: f(X)', rowLabel: 'position', colLabel: 'dim', rowNames: names(a), kind: 'diverging' }),
        heatmap(b.output, { id: 'output-permuted', caption: 'shuffled input: f(ΠX)', rowLabel: 'position', colLabel: 'dim', rowNames: fromNames(b), kind: 'diverging', highlight: moved })));
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
        $('console-out').replaceChildren(...reportView(answer, `attnlab ${select.value}`).filter(Boolean));
      } catch (e) {
        showError(err, e);
        $('console-out').replaceChildren();
      }
    };
    $('console-run').addEventListener('click', run);
    $('console-body').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) run(); });
  },
});

register('rotation', { needs: ['rope score', 'rope period', 'rope identity'], init() {} });
register('audit', { needs: ['rope audit'], init() {} });
register('session', { needs: ['session'], init() {} });

window.addEventListener('DOMContentLoaded', start);
