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
  if (view.estimate) q.push('estimate=1');
  const url = '/api/' + command.split(' ').join('/') + (q.length ? '?' + q.join('&') : '');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: view.signal,
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
  /** Rounded to `d` decimal places, trailing zeros dropped (present::number's Decimals). */
  decimals(x, d = 6) {
    if (Number.isNaN(x)) return 'NaN';
    if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
    if (Math.abs(x) >= 1e9) return fmt.short(x);
    const t = trimZeros(x.toFixed(d));
    return t === '-0' || t === '0' ? '0' : t;
  },
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
/** Page words for the CLI's option names that reach the page in the core's messages. */
const LIMIT_WORDS = {
  '--max-memory': 'the server’s memory limit',
  '--max-work': 'the server’s work limit',
  '--max-file-size': 'the server’s file-size limit',
};
/**
 * A message of the core as the page says it: CLI options named by the page's fields (`fields`
 * maps an option to its field's label), no "see attnlab … --help" (the page has no help).
 */
export function pageMessage(message, fields = {}) {
  return String(message)
    .replace(/\s*\(see `?attnlab [^)]*--help`?\)/g, '')
    .replace(/`attnlab ([a-z ]+) --help`/g, 'this panel')
    .replace(/--[a-z][a-z0-9-]*/g, (flag) => {
      const f = fields[flag] || LIMIT_WORDS[flag];
      return f ? `“${f}”` : `“${flag.slice(2).replace(/-/g, ' ')}”`;
    });
}
function showError(el, err, fields) {
  if (!err) { el.hidden = true; el.textContent = ''; return; }
  el.hidden = false;
  el.textContent = pageMessage(err.message || String(err), fields);
}
/** An error about one field of the page, named by its label. */
function fieldError(label, message) { return new Error(`${label}: ${message}`); }
/** A field's value as a finite number, or an error naming the field. */
function numberField(id, label, { required = true, positive = false, integer = false, min } = {}) {
  const raw = $(id).value.trim();
  if (raw === '') {
    if (required) throw fieldError(label, 'required');
    return undefined;
  }
  const x = Number(raw);
  if (!Number.isFinite(x)) throw fieldError(label, `“${raw}” is not a finite number; expected e.g. ${integer ? '24' : '10000'}`);
  if (integer && !Number.isInteger(x)) throw fieldError(label, `“${raw}” is not a whole number`);
  if (positive && !(x > 0)) throw fieldError(label, `“${raw}” is not above 0`);
  if (min !== undefined && x < min) throw fieldError(label, `“${raw}” is below ${min}`);
  return x;
}
/** A seed: digits only, 0 to 2⁶⁴ − 1, sent as a string so every digit survives JSON. */
function seedField(id, label) {
  const raw = $(id).value.trim();
  if (raw === '') return undefined;
  if (!/^[0-9]+$/.test(raw) || BigInt(raw) > 18446744073709551615n) {
    throw fieldError(label, `“${raw}” is not a whole number from 0 to 18446744073709551615`);
  }
  return raw.replace(/^0+(?=.)/, '');
}
/** Tickets: `const live = next()` marks a new run; `live()` is false once a newer run began. */
function tickets() {
  let n = 0;
  return () => { const mine = ++n; return () => mine === n; };
}
/** The least and greatest of many values (no argument spreading: any length). */
function extent(values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return [lo, hi];
}
/** A long list of whole numbers as its first few and how many there are. */
function fewOf(list, k = 8) {
  if (list.length <= k) return list.join(', ');
  return `${list.slice(0, k).join(', ')}, … (${list.length} in all, the last ${list[list.length - 1]})`;
}
/** A box that scrolls sideways on its own, so a wide table never widens the page. */
function scrollBox(...children) { return h('div', { class: 'scroll' }, ...children); }
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

/**
 * White → blue for weights; blue–white–red about 0 for signed values; for a difference read
 * against a tolerance, white → green up to the tolerance and red above it.
 */
function colour(v, scale) {
  if (!Number.isFinite(v)) return '#bbbbbb';
  if (scale.kind === 'sequential') {
    const t = scale.max > scale.min ? Math.min(1, Math.max(0, (v - scale.min) / (scale.max - scale.min))) : 0;
    const c = (a, b) => Math.round(a + (b - a) * t);
    return `rgb(${c(255, 23)},${c(255, 78)},${c(255, 166)})`;
  }
  if (scale.kind === 'tolerance') {
    const r = scale.tol > 0 ? Math.abs(v) / scale.tol : (v === 0 ? 0 : Infinity);
    if (r <= 1) {
      const t = 0.25 + 0.5 * r;
      const c = (a, b) => Math.round(a + (b - a) * t);
      return v === 0 ? '#f2fbf3' : `rgb(${c(255, 60)},${c(255, 160)},${c(255, 80)})`;
    }
    const t = Math.min(1, 0.45 + Math.log10(r) / 4);
    const c = (a, b) => Math.round(a + (b - a) * t);
    return `rgb(${c(255, 200)},${c(255, 20)},${c(255, 20)})`;
  }
  const t = scale.max > 0 ? Math.max(-1, Math.min(1, v / scale.max)) : 0;
  const w = (a) => Math.round(255 * (1 - a));
  return t >= 0 ? `rgb(255,${w(t)},${w(t)})` : `rgb(${w(-t)},${w(-t)},255)`;
}
function textColour(v, scale) {
  if (scale.kind === 'tolerance') {
    const r = scale.tol > 0 ? Math.abs(v) / scale.tol : 0;
    return r > 1 ? '#ffffff' : '#111111';
  }
  const t = scale.kind === 'sequential'
    ? (scale.max > scale.min ? (v - scale.min) / (scale.max - scale.min) : 0)
    : Math.abs(scale.max > 0 ? v / scale.max : 0);
  return t > 0.55 ? '#ffffff' : '#111111';
}

/**
 * Arrow keys, Home and End move the focus between the cells of `table` (one roving tab stop:
 * Tab reaches the table once, at the cell last visited).
 */
function roving(table) {
  const rows = () => [...table.querySelectorAll('tr')].filter((r) => r.querySelector('td'));
  const first = table.querySelector('td');
  if (first) first.tabIndex = 0;
  table.addEventListener('keydown', (e) => {
    const td = e.target.closest('td');
    if (!td) return;
    const all = rows();
    let r = all.indexOf(td.parentElement);
    let c = [...td.parentElement.querySelectorAll('td')].indexOf(td);
    switch (e.key) {
      case 'ArrowRight': c += 1; break;
      case 'ArrowLeft': c -= 1; break;
      case 'ArrowDown': r += 1; break;
      case 'ArrowUp': r -= 1; break;
      case 'Home': c = 0; if (e.ctrlKey) r = 0; break;
      case 'End': c = Infinity; if (e.ctrlKey) r = Infinity; break;
      default: return;
    }
    e.preventDefault();
    r = Math.max(0, Math.min(all.length - 1, r));
    const cells = [...all[r].querySelectorAll('td')];
    c = Math.max(0, Math.min(cells.length - 1, c));
    td.tabIndex = -1;
    cells[c].tabIndex = 0;
    cells[c].focus();
  });
}

/**
 * A matrix (from a report) as a table of coloured cells with their values (hover or focus a cell
 * to read its full value; arrow keys move between cells), row/column labels and a colour bar.
 */
function heatmap(matrix, { caption, rowLabel = 'row', colLabel = 'col', rowNames, colNames, highlight = new Set(), kind = 'sequential', id, shared, tol, digits = 3 }) {
  // `shared`: the other matrices drawn beside this one, so a pair uses one colour scale.
  const flat = [matrix, ...(shared || [])].flat(2).filter(Number.isFinite);
  const [min, max] = extent(flat);
  const [, absMax] = extent(flat.map(Math.abs));
  const scale = kind === 'sequential' ? { kind, min, max } : kind === 'tolerance' ? { kind, tol } : { kind, max: absMax };
  const readout = h('div', { class: 'readout', 'aria-live': 'polite' });
  const cellText = kind === 'tolerance' ? (v) => fmt.sci(v, 2) : (v) => fmt.sig(v, digits);
  const table = h('table', { id, 'data-min': min, 'data-max': max },
    h('caption', {}, caption),
    h('tr', {}, h('th', { scope: 'col', text: `${rowLabel} \\ ${colLabel}` }),
      matrix[0].map((_, j) => h('th', { scope: 'col', text: colNames ? colNames[j] : String(j) }))),
    matrix.map((row, i) => h('tr', { class: highlight.has(i) ? 'hl' : null },
      h('th', { scope: 'row', text: rowNames ? rowNames[i] : String(i) }),
      row.map((v, j) => {
        const extra = kind === 'tolerance' && tol > 0 ? ` (${fmt.sig(Math.abs(v) / tol, 3)} × the tolerance ${fmt.sci(tol)})` : '';
        const label = `${rowLabel} ${rowNames ? rowNames[i] : i}, ${colLabel} ${colNames ? colNames[j] : j}: ${fmt.short(v)}${extra}`;
        const td = h('td', {
          title: label, 'aria-label': label, tabindex: '-1', 'data-value': v,
          class: kind === 'tolerance' ? (Math.abs(v) <= tol ? 'within' : 'over') : null,
          style: `background:${colour(v, scale)};color:${textColour(v, scale)}`,
        }, cellText(v));
        const show = () => { readout.textContent = label; };
        td.addEventListener('mouseenter', show);
        td.addEventListener('focus', show);
        return td;
      }))));
  roving(table);
  let bar;
  if (kind === 'tolerance') {
    bar = h('div', { class: 'colourbar', 'aria-label': `green: within the tolerance ${fmt.sci(tol)}; red: above it` },
      h('span', { text: '0' }), h('span', { class: 'bar', style: `background:linear-gradient(to right, ${colour(0, scale)}, ${colour(tol, scale)} 50%, ${colour(tol * 1.0001, scale)} 50%, ${colour(tol * 1e4, scale)})` }),
      h('span', { text: `tolerance ${fmt.sci(tol)} at the middle; red above it` }));
  } else {
    const lo = scale.kind === 'sequential' ? scale.min : -scale.max;
    const hi = scale.max;
    const gradient = scale.kind === 'sequential'
      ? `linear-gradient(to right, ${colour(lo, scale)}, ${colour(hi, scale)})`
      : `linear-gradient(to right, ${colour(lo, scale)}, #ffffff, ${colour(hi, scale)})`;
    bar = h('div', { class: 'colourbar', 'aria-label': `colour scale from ${fmt.sig(lo, 3)} to ${fmt.sig(hi, 3)}` },
      h('span', { text: fmt.sig(lo, 3) }), h('span', { class: 'bar', style: `background:${gradient}` }), h('span', { text: fmt.sig(hi, 3) }));
  }
  return h('div', { class: 'heat' }, scrollBox(table), bar, readout);
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
      const to = { ArrowRight: (i + 1) % buttons.length, ArrowLeft: (i + buttons.length - 1) % buttons.length, Home: 0, End: buttons.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      select(buttons[to]);
    });
  });
  return select;
}

/** A note in place of a panel whose command this server does not have. */
function unavailable(el, commands) {
  el.replaceChildren(h('p', { class: 'unavailable' },
    `This panel needs ${commands.map((c) => `attnlab ${c}`).join(', ')}, which this build of the server does not offer yet (GET /api/commands lists what it does).`));
}

// ----------------------------------------------------------------- shuffle

/** The page's words for the options of attend / equivariance, for the core's messages. */
const SHUFFLE_FIELDS = {
  '--text': 'Sequence', '--n': 'n (positions)', '--dim': 'd (width)', '--seed': 'Seed', '--rng': 'Generator',
  '--pos': 'Positions', '--index-scale': 'Index scale', '--mask': 'Mask', '--layer': 'Layer', '--dtype': 'dtype',
  '--blocks': 'Load blocks', '--perm': 'the order shown', '--product': 'the order shown',
};

const shuffle = {
  tokens: [],   // the original tokens (or x0, x1, … for drawn rows)
  order: [],    // order[i] = which original position sits at position i (numpy's perm)
  ticket: tickets(),

  init() {
    $('shuffle-text').addEventListener('input', debounce(() => { $('shuffle-input').value = 'text'; this.setText(); }, 250));
    $('shuffle-input').addEventListener('change', () => this.setText());
    for (const id of ['shuffle-pos', 'shuffle-mask', 'shuffle-layer', 'shuffle-dtype', 'shuffle-rng']) {
      $(id).addEventListener('change', () => this.update());
    }
    for (const id of ['shuffle-scale', 'shuffle-seed']) $(id).addEventListener('input', debounce(() => this.update(), 250));
    for (const id of ['shuffle-n', 'shuffle-d']) $(id).addEventListener('input', debounce(() => this.setText(), 250));
    $('shuffle-blocks').addEventListener('input', debounce(() => this.update(), 400));
    $('shuffle-shuffle').addEventListener('click', () => this.shuffle());
    $('shuffle-reset').addEventListener('click', () => { this.order = this.tokens.map((_, i) => i); this.draw(); this.update(); });
    $('shuffle-course').addEventListener('click', () => this.course());
    this.course();
  },

  /** The course program: random X with n = d = 4 from numpy's generator, seed 0, Π = [2, 0, 3, 1]. */
  course() {
    $('shuffle-input').value = 'random';
    $('shuffle-n').value = '4'; $('shuffle-d').value = '4'; $('shuffle-seed').value = '0';
    $('shuffle-rng').value = 'numpy'; $('shuffle-pos').value = 'none'; $('shuffle-mask').value = 'none';
    $('shuffle-layer').value = 'attention'; $('shuffle-dtype').value = 'f64'; $('shuffle-blocks').value = '';
    this.setText([2, 0, 3, 1]);
  },

  random() { return $('shuffle-input').value === 'random'; },

  /** The rows being shuffled: the typed tokens, or x0 … x(n−1) of the drawn X. */
  rows() {
    if (!this.random()) return $('shuffle-text').value.trim().split(/\s+/).filter(Boolean);
    const n = Number($('shuffle-n').value);
    return Number.isInteger(n) && n >= 1 && n <= 64 ? Array.from({ length: n }, (_, i) => `x${i}`) : [];
  },

  setText(order) {
    $('shuffle-text-field').hidden = this.random();
    $('shuffle-n-field').hidden = !this.random();
    $('shuffle-d-field').hidden = !this.random();
    this.tokens = this.rows();
    this.order = order && order.length === this.tokens.length ? order : this.tokens.map((_, i) => i);
    this.draw();
    this.update();
  },

  /** Picks up an edit of the sequence the debounce has not delivered yet. */
  syncText() {
    const now = this.rows();
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

  /** The options every request of this panel shares, each field checked (naming it). */
  base() {
    const body = {
      pos: $('shuffle-pos').value,
      mask: $('shuffle-mask').value,
      dtype: $('shuffle-dtype').value,
      rng: $('shuffle-rng').value,
    };
    const seed = seedField('shuffle-seed', 'Seed');
    if (seed !== undefined) body.seed = seed;
    $('shuffle-scale-field').hidden = body.pos !== 'index';
    if (body.pos === 'index') {
      const scale = numberField('shuffle-scale', 'Index scale', { required: false });
      if (scale !== undefined) body.index_scale = scale;
    }
    if (this.random()) {
      body.n = numberField('shuffle-n', 'n (positions)', { integer: true, min: 1 });
      body.dim = numberField('shuffle-d', 'd (width)', { integer: true, min: 1 });
    } else if (this.tokens.length === 0) {
      throw fieldError('Sequence', 'type at least one token (A, B or “.”)');
    }
    const blocks = $('shuffle-blocks').value.trim();
    if (blocks) {
      try { body.blocks = JSON.parse(blocks); } catch (e) { throw fieldError('Load blocks', `not valid JSON (${e.message})`); }
    }
    return body;
  },

  /** Empties every result of the panel (an error must not sit beside an old answer). */
  clear() {
    for (const id of ['shuffle-verdict', 'shuffle-product', 'shuffle-weights', 'shuffle-outputs']) put($(id));
    $('shuffle-text-out').textContent = '';
  },

  update() { return shuffle.run(); },

  async run() {
    const live = this.ticket();
    const err = $('shuffle-error');
    let base;
    try { base = this.base(); } catch (e) { showError(err, e); this.clear(); return; }
    const layer = $('shuffle-layer').value;
    const perm = [...this.order];
    const input = this.random() ? {} : { text: this.tokens.join(' ') };
    const permuted = this.random() ? null : perm.map((o) => this.tokens[o]).join(' ');
    const jobs = [api('equivariance', { ...base, ...input, layer, perm, product: true }, { text: true })];
    if (layer === 'attention') {
      jobs.push(api('attend', { ...base, ...input }));
      if (permuted !== null) jobs.push(api('attend', { ...base, text: permuted }));
    }
    let results;
    try {
      results = await Promise.all(jobs);
    } catch (e) {
      if (!live()) return;
      showError(err, e, SHUFFLE_FIELDS);
      this.clear();
      return;
    }
    if (!live()) return;
    showError(err, null);
    const [eq, a, b] = results;
    // The seed as sent: the report's JSON number would lose digits above 2⁵³ in JavaScript.
    this.verdict({ ...eq.report, seed: base.seed ?? eq.report.seed });
    this.product(eq.report);
    $('shuffle-text-out').textContent = eq.text;
    if (a) this.maps(a, b);
    else {
      put($('shuffle-weights'), h('p', { class: 'hint' }, 'An RNN has no attention weights: it reads the sequence in order, one step at a time, so only the verdict and the product above apply.'));
      put($('shuffle-outputs'));
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
        `${r.equation} — layer ${r.layer}, positions ${r.pos}, mask ${r.mask}, ${r.dtype}, ${r.rng} generator, seed ${r.seed}, n = ${r.n}, d = ${r.dim}; ${moved} of ${r.n} positions moved.`),
      scrollBox(h('table', { class: 'numbers', id: 'shuffle-numbers' },
        rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row', text: k }), h('td', { class: 'num', text: v, 'data-field': k }))))),
      ...(r.note ? [h('p', { class: 'hint', id: 'shuffle-note', text: r.note })] : []));
    const rope = r.pos === 'rope' ? ' Rotary: half-split pairing (dimension i with i + d/2), base 10000.' : '';
    $('shuffle-conventions').textContent = `Conventions: positions are 0-based; a permutation is numpy's X[perm] (row i of the shuffled input is row perm[i] of the original); heat-map rows are queries (positions), columns keys; dtype ${r.dtype}.${rope}`;
  },

  /** The course's product: f(ΠX) beside Π f(X), their difference on the tolerance's scale. */
  product(r) {
    const p = r.product;
    if (!p) { put($('shuffle-product')); return; }
    const names = p.perm.map((o, i) => `${i} ←${o}`);
    put($('shuffle-product'),
      h('figcaption', {}, `The product: f(ΠX) and Π f(X), and their difference entry by entry (${r.dtype})`),
      h('div', { class: 'side' },
        heatmap(p.f_of_permuted, { id: 'product-fpx', caption: 'f(ΠX): the layer on the shuffled input', rowLabel: 'position', colLabel: 'dim', rowNames: names, kind: 'diverging', shared: [p.permuted_f], digits: 4 }),
        heatmap(p.permuted_f, { id: 'product-pfx', caption: 'Π f(X): the output on X, rows shuffled', rowLabel: 'position', colLabel: 'dim', rowNames: names, kind: 'diverging', shared: [p.f_of_permuted], digits: 4 }),
        heatmap(p.difference, { id: 'product-diff', caption: `f(ΠX) − Π f(X) against the tolerance ${fmt.sci(r.tolerance)}`, rowLabel: 'position', colLabel: 'dim', rowNames: names, kind: 'tolerance', tol: r.tolerance })),
      h('p', { class: 'headline', id: 'product-verdict' },
        h('span', { class: `badge ${r.verdict}` }, r.verdict.toUpperCase()), ' ',
        `largest |f(ΠX) − Π f(X)| = ${fmt.sci(r.max_abs_error)} ${r.max_abs_error <= r.tolerance ? '≤' : '>'} tolerance ${fmt.sci(r.tolerance)} (margin ${fmt.sig(r.margin, 4)}).`));
  },

  maps(a, b) {
    const moved = new Set(this.order.map((o, i) => (o !== i ? i : -1)).filter((i) => i >= 0));
    const names = (r) => (r.tokens ? r.tokens.map((t, i) => `${i} ${t}`) : null);
    const fromNames = (r) => (r.tokens ? r.tokens.map((t, i) => `${i} ${t} ←${this.order[i]}`) : null);
    if (!b) {
      put($('shuffle-weights'),
        h('figcaption', {}, 'Attention weights A(X) of the drawn input (each row sums to 1)'),
        h('div', { class: 'side' }, heatmap(a.weights, { id: 'weights-original', caption: 'original input: A(X)', rowLabel: 'query', colLabel: 'key' })));
      put($('shuffle-outputs'));
      return;
    }
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
let selectTab;

async function start() {
  selectTab = tabs();
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
  window.addEventListener('resize', debounce(() => {
    for (const p of Object.values(panels)) if (p.resized) p.resized();
  }, 200));
  document.body.dataset.ready = 'true';
}

// Panels defined below register here.
const extraPanels = {};
export function register(name, panel) { extraPanels[name] = panel; }

/** A chart rendered by the server (attnlab-render's SVG, the CLI's figure) as an image at its own size (scrolling in its box on a narrow screen, so its text keeps its size). */
function svgFigure(chart) {
  const m = /<svg[^>]*\swidth="([0-9.]+)"/.exec(chart.svg);
  const img = h('img', {
    src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(chart.svg),
    alt: chart.title, 'data-chart': chart.name,
    style: m ? `width:${m[1]}px` : null,
  });
  return h('figure', {}, scrollBox(img), h('figcaption', { text: chart.title }));
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
    const ticket = tickets();
    const run = async () => {
      const live = ticket();
      const err = $('console-error');
      let body;
      try { body = JSON.parse($('console-body').value || '{}'); } catch (e) {
        showError(err, fieldError('Request (JSON object)', `not valid JSON (${e.message})`));
        put($('console-out'));
        return;
      }
      // The fields of this panel are the JSON names: a CLI option becomes its snake_case field.
      const fields = new Proxy({}, { get: (_, flag) => (typeof flag === 'string' ? flag.slice(2).replace(/-/g, '_') : undefined) });
      try {
        const answer = await api(select.value, body, { charts: true, text: true });
        if (!live()) return;
        showError(err, null);
        put($('console-out'), ...reportView(answer, `attnlab ${select.value}`).filter(Boolean));
      } catch (e) {
        if (!live()) return;
        showError(err, e, fields);
        put($('console-out'));
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
 * At most two points per pixel column (the lowest and the highest of the points in it, in
 * order), so a curve of a million separations draws as fast as one of a thousand and looks
 * the same.
 */
function decimate(points, columns) {
  if (points.length <= columns * 2) return points;
  const out = [];
  const per = points.length / columns;
  for (let b = 0; b < columns; b++) {
    const s = Math.floor(b * per), e = Math.min(points.length, Math.floor((b + 1) * per));
    if (e <= s) continue;
    let lo = points[s], hi = points[s];
    for (let k = s + 1; k < e; k++) {
      if (points[k][1] < lo[1]) lo = points[k];
      if (points[k][1] > hi[1]) hi = points[k];
    }
    if (lo === hi) out.push(lo); else if (lo[0] < hi[0]) out.push(lo, hi); else out.push(hi, lo);
  }
  return out;
}

/**
 * A line chart of report data: series [{name, points: [[x, y]], dashed}], vertical marks
 * [{x, label, colour}]; drawn at `width` CSS pixels (the box it goes in), so its 12 px text is
 * never scaled down.
 */
function lineChart({ series, marks = [], xLabel, yLabel, id, width = 820 }) {
  const W = Math.max(300, Math.min(900, Math.round(width))), H = W < 560 ? 300 : 360;
  const L = 58, R = 16, T = 14, B = 46;
  const [sx0, sx1] = extent(series.flatMap((s) => [s.points[0][0], s.points[s.points.length - 1][0]]).concat(marks.map((m) => m.x)));
  let [y0, y1] = [Infinity, -Infinity];
  for (const s of series) { const [a, b] = extent(s.points.map((p) => p[1])); y0 = Math.min(y0, a); y1 = Math.max(y1, b); }
  const x0 = sx0, x1 = sx1;
  if (y1 - y0 < 1e-12) { y0 -= 0.5; y1 += 0.5; }
  const pad = (y1 - y0) * 0.06; y0 -= pad; y1 += pad;
  const X = (x) => L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R);
  const Y = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  const el = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'plot', role: 'img', id, 'aria-label': `${yLabel} vs ${xLabel}` });
  for (const t of ticks(y0, y1)) {
    el.append(svg('line', { x1: L, x2: W - R, y1: Y(t), y2: Y(t), stroke: '#e6e6e6' }),
      svg('text', { x: L - 6, y: Y(t) + 4, 'text-anchor': 'end' }, fmt.sig(t, 3)));
  }
  for (const t of ticks(x0, x1, W < 560 ? 5 : 10).filter((v) => Number.isInteger(v) || x1 - x0 < 10)) {
    el.append(svg('line', { x1: X(t), x2: X(t), y1: H - B, y2: H - B + 5, stroke: '#666' }),
      svg('text', { x: X(t), y: H - B + 18, 'text-anchor': 'middle' }, fmt.short(t)));
  }
  el.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#666' }),
    svg('line', { x1: L, x2: L, y1: T, y2: H - B, stroke: '#666' }),
    svg('text', { x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle' }, xLabel),
    svg('text', { x: 14, y: (T + H - B) / 2, transform: `rotate(-90 14 ${(T + H - B) / 2})`, 'text-anchor': 'middle' }, yLabel));
  for (const m of marks) {
    const right = X(m.x) > W - 170;
    el.append(svg('line', { x1: X(m.x), x2: X(m.x), y1: T, y2: H - B, stroke: m.colour || '#555', 'stroke-dasharray': m.solid ? null : '5 4', 'stroke-width': m.solid ? 3 : 1.5, 'data-mark': m.kind || 'mark', 'data-x': m.x }),
      svg('text', { x: X(m.x) + (right ? -4 : 4), y: T + 12 + (m.row || 0) * 14, fill: m.colour || '#555', 'text-anchor': right ? 'end' : 'start' }, m.label));
  }
  series.forEach((s, i) => {
    const c = s.colour || PALETTE[i % PALETTE.length];
    const pts = decimate(s.points, W - L - R);
    const d = pts.map((p, k) => `${k ? 'L' : 'M'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join('');
    el.append(svg('path', { d, fill: 'none', stroke: c, 'stroke-width': s.bold ? 3 : 2, 'stroke-dasharray': s.dashed ? '6 4' : null }));
    if (s.points.length <= 80) for (const p of s.points) el.append(svg('circle', { cx: X(p[0]), cy: Y(p[1]), r: 2.6, fill: c }));
    el.append(svg('text', { x: W - R - 4, y: H - B - 8 - (series.length - 1 - i) * 15, 'text-anchor': 'end', fill: c }, s.name));
  });
  return el;
}

/** The width a chart may take in `el` (its box, or the panel's when the box is not laid out yet). */
function chartWidth(el) {
  const w = el.clientWidth || (el.closest('.panel') && el.closest('.panel').clientWidth) || 0;
  return w > 0 ? w : Math.min(820, window.innerWidth - 40);
}

// ---------------------------------------------------------------- rotation

const ROTATION_FIELDS = { '--omega': 'Frequencies ω', '--max-sep': 'Largest separation', '--context': 'Context length L', '--trials': 'trials' };

/**
 * One plane's unit circle: q rotated to position i (angle i·ω), k to position j = i + s (angle
 * j·ω), the arc between them (s·ω). The arrows are a drawing of the rotation; the score shown
 * beside it is the API's.
 */
function unitCircle(label, omega, i, j, k) {
  const S = 184, C = S / 2, R = 54;
  const turn = (a) => ((a % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
  const ai = turn(i * omega), aj = turn(j * omega);
  const at = (a, r = R) => [C + r * Math.cos(a), C - r * Math.sin(a)];
  const [qx, qy] = at(ai), [kx, ky] = at(aj);
  const sweep = turn(aj - ai);
  const [ax, ay] = at(ai, 24), [bx, by] = at(aj, 24);
  const el = svg('svg', { viewBox: `0 0 ${S} ${S + 18}`, width: S, height: S + 18, class: 'circle', role: 'img', 'data-plane': k, 'data-q-angle': ai.toFixed(6), 'data-k-angle': aj.toFixed(6),
    'aria-label': `plane ${k}, ω = ${label}: q at position ${i}, k at position ${j}; the angle between them is ${j - i}·ω` },
  svg('circle', { cx: C, cy: C, r: R, fill: 'none', stroke: '#999' }),
  svg('line', { x1: C - R - 6, x2: C + R + 6, y1: C, y2: C, stroke: '#e0e0e0' }),
  svg('line', { y1: C - R - 6, y2: C + R + 6, x1: C, x2: C, stroke: '#e0e0e0' }),
  svg('path', { d: `M${ax.toFixed(1)},${ay.toFixed(1)} A24,24 0 ${sweep > Math.PI ? 1 : 0} 0 ${bx.toFixed(1)},${by.toFixed(1)}`, fill: 'none', stroke: '#ff8c00', 'stroke-width': 3 }),
  svg('line', { x1: C, y1: C, x2: qx, y2: qy, stroke: PALETTE[0], 'stroke-width': 3 }),
  svg('line', { x1: C, y1: C, x2: kx, y2: ky, stroke: PALETTE[1], 'stroke-width': 3 }),
  svg('text', { x: qx + (qx >= C ? 3 : -3), y: qy + (qy >= C ? 13 : -3), 'text-anchor': qx >= C ? 'start' : 'end', fill: PALETTE[0] }, `q@${i}`),
  svg('text', { x: kx + (kx >= C ? 3 : -3), y: ky + (ky >= C ? 13 : -3), 'text-anchor': kx >= C ? 'start' : 'end', fill: PALETTE[1] }, `k@${j}`),
  svg('text', { x: C, y: S + 12, 'text-anchor': 'middle' }, `ω = ${label}`));
  return el;
}

register('rotation', {
  needs: ['rope score', 'rope period', 'rope identity', 'rope resolve'],
  score: null,
  periods: [],
  resolve: null,
  ticket: tickets(),
  init() {
    for (const id of ['rotation-omega', 'rotation-max', 'rotation-context']) $(id).addEventListener('input', debounce(() => this.update(), 350));
    $('rotation-s').addEventListener('input', () => this.draw());
    $('rotation-i').addEventListener('input', () => this.drawCircles());
    this.update();
  },
  shown() { this.draw(); },
  resized() { this.draw(); },
  update() { return this.run(); },
  clear() {
    this.score = null;
    for (const id of ['rotation-readout', 'rotation-chart', 'rotation-identity', 'rotation-circles', 'rotation-resolve']) put($(id));
  },
  body() {
    const omega = $('rotation-omega').value.trim();
    if (!omega) throw fieldError('Frequencies ω', 'required, e.g. pi/2,pi/3');
    const maxSep = numberField('rotation-max', 'Largest separation', { integer: true, min: 1 });
    const context = $('rotation-context').value.trim();
    return { omega, maxSep, context };
  },
  async run() {
    const live = this.ticket();
    const err = $('rotation-error');
    let b;
    try { b = this.body(); } catch (e) { showError(err, e); this.clear(); return; }
    let score, periods, identity, resolve = null;
    try {
      score = await api('rope score', { omega: b.omega, max_sep: b.maxSep });
      periods = await Promise.all(score.omegas.map((o) => api('rope period', { omega: o.label })));
      identity = await api('rope identity', { omega: b.omega, trials: 200 }, { charts: true });
      if (b.context) resolve = await api('rope resolve', { omega: b.omega, context: b.context });
    } catch (e) {
      if (!live()) return;
      showError(err, e, ROTATION_FIELDS);
      this.clear();
      return;
    }
    if (!live()) return;
    showError(err, null);
    this.score = score; this.periods = periods; this.identity = identity; this.resolve = resolve;
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
    const last = r.separations.length - 1;
    put($('rotation-readout'), scrollBox(
      h('table', { class: 'numbers', id: 'rotation-table' },
        h('tr', {}, h('th', { text: 'ω' }), h('th', { text: `cos(${s}·ω)` }), h('th', { text: 'first repeat (exact)' }), h('th', { text: 'wavelength 2π/ω' })),
        r.omegas.map((o, k) => {
          const p = this.periods[k];
          return h('tr', {}, h('td', { text: o.label }), h('td', { class: 'num', 'data-omega': o.label, text: fmt.sig(row.scores[k], 6) }),
            h('td', { class: 'num', 'data-repeat': o.label, text: p.first_repeat === null ? `none (irrational; within ${fmt.short(p.tol)} rad at ${p.first_within_tol ?? '—'})` : String(p.first_repeat) }),
            h('td', { class: 'num', text: fmt.sig(p.wavelength, 6) }));
        }),
        h('tr', {}, h('th', { text: 'mean' }), h('td', { class: 'num', id: 'rotation-mean', text: fmt.sig(row.mean, 6) }),
          h('td', { colspan: '2', class: 'wrap', id: 'rotation-repeats', text: likeZero ? `s = ${s} scores like s = 0 (every phase within ${fmt.short(r.tolerance)} rad of a full turn)` : (r.equal_to_zero_separation.length ? `the set repeats at s = ${fewOf(r.equal_to_zero_separation)}` : `no separation in 1..${last} scores like s = 0`) })))));
    const series = [];
    if (r.omegas.length <= 5) r.omegas.forEach((o, k) => series.push({ name: `ω = ${o.label}`, points: r.separations.map((x) => [x.separation, x.scores[k]]) }));
    series.push({ name: `mean over ${r.omegas.length} planes`, points: r.separations.map((x) => [x.separation, x.mean]), bold: true, colour: '#111' });
    let row0 = 0;
    const marks = [];
    this.periods.forEach((p, k) => {
      if (p.first_repeat !== null && p.first_repeat <= last && r.omegas.length <= 5) marks.push({ x: p.first_repeat, label: `ω = ${r.omegas[k].label} repeats`, colour: PALETTE[k % PALETTE.length], row: row0++, kind: 'repeat' });
    });
    const res = this.resolve;
    if (res) {
      if (res.common_period !== null && res.common_period !== undefined && res.common_period <= last) marks.push({ x: res.common_period, label: `common period ${res.common_period}`, colour: '#6a1b9a', solid: false, row: row0++, kind: 'common-period' });
      if (res.context - 1 <= last) marks.push({ x: res.context - 1, label: `L − 1 = ${res.context - 1}`, colour: '#444', solid: true, row: row0++, kind: 'context' });
    }
    marks.push({ x: s, label: `s = ${s}`, colour: '#ff8c00', solid: true, row: row0, kind: 'slider' });
    put($('rotation-chart'), lineChart({ series, marks, xLabel: 'separation s = j − i', yLabel: 'score cos(s·ω)', id: 'rotation-plot', width: chartWidth($('rotation-chart')) }));
    this.drawResolve();
    this.drawCircles();
  },
  drawResolve() {
    const res = this.resolve;
    if (!res) { put($('rotation-resolve'), h('p', { class: 'hint', text: 'Give a context length L to see what the set resolves within it (attnlab rope resolve).' })); return; }
    const pair = res.pairwise && res.pairwise.coinciding;
    put($('rotation-resolve'), h('p', { id: 'rotation-resolution', 'data-resolves': String(res.resolves) },
      h('span', { class: `badge ${res.resolves ? 'holds' : 'breaks'}` }, res.resolves ? 'RESOLVES' : 'DOES NOT RESOLVE'), ' ',
      `within L = ${res.context}: `,
      res.common_period !== null && res.common_period !== undefined ? `common period ${res.common_period} (lcm of the planes' periods${res.common_period < res.context ? ', < L' : ', ≥ L'}); ` : 'no exact common period (an irrational frequency); ',
      res.first_alias !== null && res.first_alias !== undefined ? `separation ${res.first_alias} is indistinguishable from 0; ` : `every separation 1..${res.context - 1} is distinguished from 0 (smallest margin ${fmt.sig(res.min_margin, 4)} rad at ${res.margin_at}); `,
      pair ? `an unmasked layer also confuses +${pair[0]} with ${pair[1]}.` : (res.pairwise ? 'separations −(L−1)..L−1 are pairwise distinct.' : '')));
  },
  drawCircles() {
    if (!this.score) return;
    const r = this.score;
    const s = Number($('rotation-s').value);
    const i = Number($('rotation-i').value);
    const j = i + s;
    $('rotation-i-out').textContent = String(i);
    const row = r.separations[s];
    const planes = r.omegas.slice(0, 6);
    put($('rotation-circles'),
      h('div', { class: 'side' }, planes.map((o, k) => unitCircle(o.label, o.value, i, j, k))),
      r.omegas.length > planes.length ? h('p', { class: 'hint', text: `the first ${planes.length} of ${r.omegas.length} planes are drawn` }) : null,
      h('p', { class: 'headline' }, `q at i = ${i}, k at j = ${j}: the angle between them is (j − i)·ω = ${s}·ω in every plane, so the score is `,
        h('output', { id: 'rotation-pair-score', 'data-separation': s, text: fmt.sig(row.mean, 6) }),
        ` (the mean of cos(${s}·ω), computed for s = ${s}) — move i and both arrows turn, the score stays.`));
  },
  drawIdentity() {
    const a = this.identity, r = a.report;
    const [i, j] = r.worst_positions;
    const pipelines = r.invariance.length ? Object.keys(r.invariance[0].errors) : [];
    put($('rotation-identity'),
      h('p', { class: 'headline' }, h('span', { class: `badge ${r.holds ? 'holds' : 'breaks'}`, id: 'identity-badge', 'data-holds': String(r.holds) }, r.holds ? 'HOLDS' : 'BREAKS'), ' ',
        `over ${r.trials} random (q, k, i, j) in f64, ${r.planes} planes`),
      scrollBox(h('table', { class: 'numbers', id: 'identity-numbers' },
        h('tr', {}, h('th', { text: 'max |(R(iω)q)ᵀ(R(jω)k) − qᵀR((j−i)ω)k|' }), h('td', { class: 'num', 'data-field': 'max_abs_error', text: fmt.sci(r.max_abs_error) })),
        h('tr', {}, h('th', { text: 'tolerance' }), h('td', { class: 'num', 'data-field': 'tolerance', text: fmt.sci(r.tolerance) })),
        h('tr', {}, h('th', { text: 'largest error ÷ its tolerance' }), h('td', { class: 'num', text: fmt.sig(r.max_error_ratio, 4) })),
        h('tr', {}, h('th', { text: 'worst case at positions (i, j)' }), h('td', { class: 'num', text: `${i}, ${j} (j − i = ${j - i})` })))),
      h('p', { class: 'hint', text: r.tolerance_rule }),
      h('h3', { text: 'Translation invariance: shifting both positions by t, per dtype pipeline' }),
      h('p', { class: 'hint', text: r.pipelines }),
      a.charts.length ? h('div', { class: 'charts' }, a.charts.map(svgFigure)) : null,
      h('details', {}, h('summary', { text: 'The table (error per shift and pipeline)' }),
        scrollBox(h('table', { class: 'numbers', id: 'invariance-table' },
          h('tr', {}, h('th', { text: 'shift t' }), pipelines.map((p) => h('th', { text: p }))),
          r.invariance.map((row) => h('tr', {}, h('td', { class: 'num', text: String(row.shift) }), pipelines.map((p) => h('td', { class: 'num', text: fmt.sci(row.errors[p], 3) }))))))));
  },
});

// ---------------------------------------------------------------- resolution & audit

const AUDIT_FIELDS = {
  '--preset': 'Preset', '--config': 'config.json', '--base': 'Base θ', '--dim': 'Rotary dimension', '--omega': 'Frequencies ω',
  '--context': 'Context length', '--dtype': 'dtype of the verdict',
};

register('audit', {
  needs: ['rope audit', 'rope resolve'],
  controller: null,
  ticket: tickets(),
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
    $('audit-cancel').addEventListener('click', () => this.cancel());
  },
  source() { return document.querySelector('input[name="audit-source"]:checked').value; },
  /** The request, each field checked on the page first (the message names the field). */
  body() {
    const body = { dtype: $('audit-dtype').value };
    const ctx = $('audit-context').value.trim();
    if (ctx) body.context = ctx;
    switch (this.source()) {
      case 'preset': body.preset = $('audit-preset').value; break;
      case 'config': {
        const text = $('audit-config').value.trim();
        if (!text) throw fieldError('config.json', 'paste a model’s config.json first');
        try { body.config = JSON.parse(text); } catch (e) { throw fieldError('config.json', `not valid JSON (${e.message})`); }
        break;
      }
      case 'base':
        body.base = numberField('audit-base', 'Base θ', { positive: true });
        body.dim = String(numberField('audit-dim', 'Rotary dimension', { integer: true, min: 2 }));
        break;
      default: {
        const omega = $('audit-omega').value.trim();
        if (!omega) throw fieldError('Frequencies ω', 'required, e.g. pi/2,pi/3');
        body.omega = omega;
      }
    }
    return body;
  },
  cancel() {
    if (this.controller) this.controller.abort();
  },
  busy(on) {
    $('audit-run').disabled = on;
    $('audit-cancel').hidden = !on;
  },
  async run() {
    const live = this.ticket();
    const err = $('audit-error');
    let body;
    try { body = this.body(); } catch (e) { showError(err, e); put($('audit-out')); $('audit-status').textContent = ''; return; }
    showError(err, null);
    put($('audit-out'));
    this.controller = new AbortController();
    const signal = this.controller.signal;
    this.busy(true);
    const status = $('audit-status');
    let estimate = '';
    const started = performance.now();
    const tick = () => {
      const s = Math.floor((performance.now() - started) / 1000);
      status.textContent = `Auditing… ${s} s${estimate ? ` — the request needs ${estimate}` : ''}. Cancel stops it.`;
    };
    tick();
    const timer = setInterval(tick, 1000);
    try {
      // The budget's estimate first (the core's, the same numbers the server checks).
      try {
        const est = await api('rope audit', body, { estimate: true, signal });
        estimate = est.text;
        status.dataset.ops = est.ops;
        tick();
      } catch (e) { if (e.name === 'AbortError') throw e; }
      const resolveBody = { ...body };
      delete resolveBody.dtype;
      const [a, resolve] = await Promise.all([
        api('rope audit', body, { charts: true, text: true, signal }),
        api('rope resolve', resolveBody, { signal }).catch((e) => { if (e.name === 'AbortError') throw e; return null; }),
      ]);
      if (!live()) return;
      showError(err, null);
      this.show(a, resolve);
      status.textContent = '';
    } catch (e) {
      if (!live()) return;
      put($('audit-out'));
      if (e.name === 'AbortError') {
        showError(err, null);
        status.textContent = `Cancelled after ${Math.floor((performance.now() - started) / 1000)} s (the server stops the computation too).`;
      } else {
        showError(err, e, AUDIT_FIELDS);
        status.textContent = '';
      }
    } finally {
      clearInterval(timer);
      if (live()) { this.busy(false); this.controller = null; }
    }
  },
  show(a, resolve) {
    const r = a.report, f = r.findings;
    const rows = [];
    const add = (what, ok, text) => rows.push(h('tr', { 'data-finding': what },
      h('th', { scope: 'row', text: what }),
      h('td', {}, ok === null ? '' : h('span', { class: `badge ${ok ? 'holds' : 'breaks'}`, text: ok ? 'ok' : 'note' })),
      h('td', { class: 'wrap', text })));
    add('full turns', null, `${f.turns.full_turn} of ${f.turns.planes} planes turn fully within ${f.context} positions; wavelengths ${fmt.sig(f.turns.wavelength_min, 4)} to ${fmt.sig(f.turns.wavelength_max, 4)}`);
    if (f.resolution) {
      const res = f.resolution;
      const text = res.kind === 'resolves'
        ? `resolves; closest call at separation ${res.closest_separation}, margin ${fmt.sig(res.margin, 4)} rad`
        : res.kind === 'aliases'
          ? `aliases: separation ${res.separation} is indistinguishable from 0 (every plane within ${fmt.short(res.tol)} rad of a full turn)`
          : `${res.kind}${res.separation !== undefined ? ` at separation ${res.separation}` : ''}`;
      add('resolution', res.kind === 'resolves', text);
    }
    if (resolve) {
      const pair = resolve.pairwise && resolve.pairwise.coinciding;
      const parts = [];
      if (resolve.exact) parts.push(resolve.common_period !== null ? `the exact set's common period is ${resolve.common_period} (lcm of the planes' periods; ${resolve.common_period < resolve.context ? 'within' : 'beyond'} the context ${resolve.context})` : 'the set has no common period');
      else parts.push('no exact common period (irrational frequencies)');
      if (resolve.first_alias !== null && resolve.first_alias !== undefined) parts.push(`first alias at separation ${resolve.first_alias}`);
      if (resolve.pairwise) parts.push(pair ? `unmasked (both ways): +${pair[0]} and ${pair[1]} coincide (their difference ${pair[0] - pair[1]} is a full turn of every plane)` : `unmasked (both ways): separations −${resolve.pairwise.max_difference / 2}..${resolve.pairwise.max_difference / 2} are pairwise distinct`);
      add('common period (rope resolve)', resolve.resolves && !pair, parts.join('; '));
    }
    if (f.decay) add('decay (Men et al. 2024)', f.decay.kind !== 'fails', `${f.decay.kind}${f.decay.first_negative !== null && f.decay.first_negative !== undefined ? `; B(m) first negative at m = ${f.decay.first_negative}` : ''}`);
    if (f.min_base) add('smallest base for this context', null, `${fmt.sig(f.min_base.base, 6)}${f.min_base.configured ? ` (configured ${fmt.sig(f.min_base.configured.base, 6)}, ${fmt.sig(f.min_base.configured.ratio, 4)} of it)` : ''}`);
    if (f.precision) {
      const p = f.precision;
      const exact = p.exact_up_to === null || p.exact_up_to === undefined ? 'every id is exact' : `exact up to ${p.exact_up_to}`;
      add(`precision (${p.dtype})`, null, `${p.distinct_positions} of ${f.context} position ids distinct (${exact}${p.overflow_from !== null && p.overflow_from !== undefined ? `, overflow from ${p.overflow_from}` : ''}); cos/sin cache rows distinct: ${p.distinct_rows}`);
    }
    if (f.invariance) add(`translation invariance (${f.invariance.pipeline})`, null, `a shift by ${f.invariance.first_shift} changes a score by up to ${fmt.sci(f.invariance.first_error, 4)}; worst ${fmt.sci(f.invariance.worst_error, 4)} at shift ${f.invariance.worst_shift} (exact reduction: ${fmt.sci(f.invariance.exact_error, 4)})`);
    put($('audit-out'),
      h('p', { class: 'verdict-text', id: 'audit-verdict', text: r.verdict }),
      h('p', { class: 'hint', id: 'audit-source-line', text: `${r.source}; context ${r.context}; verdict dtype ${r.dtype}` }),
      h('div', { class: 'charts', id: 'audit-charts' }, a.charts.map(svgFigure)),
      h('h3', { text: 'Findings' }),
      scrollBox(h('table', { class: 'numbers findings', id: 'audit-findings' }, rows)),
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
  // The CLI's spelling (present::prose::session::answer): lists of numbers to 6 decimals.
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'number' ? fmt.decimals(x, 6) : String(x))).join(', ');
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : fmt.decimals(v, 6);
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
  overrides: {}, // step id → the parameters changed from their defaults (sent with the answer)
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
    $('session-restart').addEventListener('click', () => { this.answers = {}; this.overrides = {}; this.base = null; this.save(); this.run(); });
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
      showError($('session-error'), e, { '--answers': 'your prediction', '--state': 'the progress file' });
      if (graded) put($('session-result'));
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
      this.stepper(r, null);
      put($('session-step'), h('p', { class: 'headline', id: 'session-done' },
        h('span', { class: `badge ${r.full_marks ? 'holds' : 'done'}`, id: 'session-done-badge' }, r.full_marks ? 'FULL MARKS' : 'COMPLETE'),
        ` ${r.score.correct} of ${r.score.total} predictions right.`),
      this.review(r));
      return;
    }
    // The next step to predict: the first the answers do not cover yet (in course order).
    const next = (r.missing && r.missing[0]) || (r.paused && r.paused.step);
    this.stepper(r, next);
    delete this.overrides[next]; // shown at its defaults: nothing changed yet
    this.showStep(this.steps.find((s) => s.id === next));
  },
  /** The end of the session: every prediction that was not right, beside what was computed and why. */
  review(r) {
    const wrong = r.steps.filter((s) => s.correct === false);
    if (!wrong.length) return h('p', { id: 'session-review', 'data-wrong': '0', text: 'Every prediction was right: nothing to review.' });
    return h('section', { id: 'session-review', 'data-wrong': String(wrong.length) },
      h('h3', { text: `Review: the ${wrong.length === 1 ? 'prediction' : `${wrong.length} predictions`} to look at again` }),
      h('ol', { class: 'review' }, wrong.map((s) => h('li', { 'data-step': s.id },
        h('strong', { text: s.title }),
        scrollBox(h('table', { class: 'numbers' },
          h('tr', {}, h('th', { text: 'question' }), h('td', { class: 'wrap', text: s.question })),
          h('tr', {}, h('th', { text: 'your prediction' }), h('td', { class: 'review-prediction', text: answerText(s.prediction) })),
          h('tr', {}, h('th', { text: 'computed' }), h('td', { class: 'review-computed', text: answerText(s.result) })))),
        h('p', { text: s.explanation })))));
  },
  /** The course's steps in order, each marked done (right or not) or to come; the current one highlighted. */
  stepper(r, current) {
    const byId = Object.fromEntries((r.steps || []).map((s) => [s.id, s]));
    put($('session-steps'), ...this.steps.map((s, i) => {
      const rec = byId[s.id];
      const mark = rec ? (rec.correct ? '✓' : '✗') : '';
      return h('li', { 'data-step': s.id, 'data-state': rec ? (rec.correct ? 'right' : 'wrong') : 'open', 'aria-current': s.id === current ? 'step' : null, title: s.title },
        `${i + 1}${mark ? ` ${mark}` : ''}`);
    }));
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
    // The step's parameters: a student may change them before predicting; the question is then
    // asked again at the new values (the engine's own wording), and the answer carries them.
    const mine = this.overrides[step.id] || {};
    const params = step.settings.length ? h('fieldset', { id: 'session-settings', class: 'controls' },
      h('legend', { text: 'Parameters of this step (change one, then ask again)' }),
      step.settings.map((st) => h('div', { class: 'field' },
        h('label', { for: `session-set-${st.name}`, text: `${st.what} (${st.name}; default ${st.default})` }),
        h('input', { type: 'text', id: `session-set-${st.name}`, value: st.value, 'data-setting': st.name, 'data-default': st.default, spellcheck: 'false', autocomplete: 'off' }),
        h('span', { class: 'hint', text: st.form }))),
      h('div', { class: 'field' }, h('button', { type: 'button', id: 'session-apply' }, 'Ask with these values'))) : null;
    put($('session-step'),
      h('h3', { id: 'session-title', 'data-step': step.id }, `Step ${n} of ${this.steps.length}: ${step.title}`),
      h('p', { class: 'phase', 'data-phase': 'predict' }, h('strong', { text: '1 · Predict. ' }), 'Say what you expect and why; then the engine runs it (2 · Run) and explains the result (3 · Explain).'),
      h('p', {}, h('strong', { text: 'Varied: ' }), step.varied, ' · ', h('strong', { text: 'held fixed: ' }), step.fixed),
      params,
      h('p', { id: 'session-question', 'data-settings': JSON.stringify(mine), text: step.question }),
      h('form', { id: 'session-form' },
        h('p', { class: 'hint', text: `Answer: ${step.answer_form}` }),
        input,
        h('p', {}, h('label', { for: 'session-reason', text: 'Why? (optional, kept with your answer)' })),
        h('input', { type: 'text', id: 'session-reason', autocomplete: 'off' }),
        h('div', { class: 'buttons', style: 'margin-top:.5rem' },
          h('button', { type: 'submit', class: 'primary', id: 'session-submit' }, 'Predict, then run'),
          step.hint ? h('button', { type: 'button', onclick: () => { hint.hidden = false; } }, 'Show a hint') : null),
        hint));
    if (params) $('session-apply').addEventListener('click', () => this.ask(step));
    $('session-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      const picked = document.querySelector('input[name="session-answer"]:checked');
      const answer = picked ? picked.value : ($('session-answer-text') ? $('session-answer-text').value.trim() : '');
      if (!answer) { showError($('session-error'), new Error('type or pick a prediction first')); return; }
      const reason = $('session-reason').value.trim();
      this.answers[step.id] = { ...(this.overrides[step.id] || {}), answer, ...(reason ? { reason } : {}) };
      await this.run(step.id);
      if ($('session-error').hidden) this.save(); else delete this.answers[step.id];
    });
  },
  /** The step asked again at the parameters typed in (the engine checks each and words the question). */
  async ask(step) {
    const changed = {};
    const labels = {};
    for (const el of document.querySelectorAll('#session-settings input[data-setting]')) {
      const v = el.value.trim();
      labels[`--${el.dataset.setting.replace(/_/g, '-')}`] = el.dataset.setting;
      if (v === '') { showError($('session-error'), fieldError(el.dataset.setting, 'empty; type a value or the default ' + el.dataset.default)); return; }
      if (v !== el.dataset.default) changed[el.dataset.setting] = v;
    }
    try {
      const listed = (await api('session', { list: true, settings: { [step.id]: changed } })).steps;
      showError($('session-error'), null);
      this.overrides[step.id] = changed;
      put($('session-result'));
      this.showStep(listed.find((s) => s.id === step.id));
    } catch (e) {
      showError($('session-error'), e, labels);
    }
  },
  /**
   * The step's picture: the panel request the step is about, at the step's settings (the
   * numbers are the API's, drawn as the panels draw them).
   */
  async chart(rec) {
    const el = $('session-chart');
    if (!el) return;
    const st = rec.settings || {};
    // The step's own permutation when the student changed it (the course program's otherwise).
    const perm = st.perm ? st.perm.split(',').map((x) => Number(x.trim())) : [2, 0, 3, 1];
    const course = { rng: 'numpy', seed: '0', n: 4, dim: 4, perm, product: true };
    const product = async (extra, caption) => {
      const r = await api('equivariance', { ...course, ...extra });
      put(el, h('figcaption', { text: caption }),
        heatmap(r.product.difference, { id: 'session-chart-map', caption: `f(ΠX) − Π f(X) against the tolerance ${fmt.sci(r.tolerance)}: ${r.verdict}`, rowLabel: 'position', colLabel: 'dim', kind: 'tolerance', tol: r.tolerance }));
    };
    const scores = async (omega, maxSep, caption, context) => {
      const r = await api('rope score', { omega, max_sep: maxSep });
      const marks = [];
      if (context) {
        const res = await api('rope resolve', { omega, context: String(context) });
        if (res.common_period !== null && res.common_period <= maxSep) marks.push({ x: res.common_period, label: `common period ${res.common_period}`, colour: '#6a1b9a', kind: 'common-period' });
        marks.push({ x: Number(context) - 1, label: `L − 1 = ${Number(context) - 1}`, colour: '#444', solid: true, row: 1, kind: 'context' });
      }
      const series = r.omegas.length <= 5 ? r.omegas.map((o, k) => ({ name: `ω = ${o.label}`, points: r.separations.map((x) => [x.separation, x.scores[k]]) })) : [];
      series.push({ name: 'mean', points: r.separations.map((x) => [x.separation, x.mean]), bold: true, colour: '#111' });
      put(el, h('figcaption', { text: caption }), lineChart({ series, marks, xLabel: 'separation s', yLabel: 'score cos(s·ω)', id: 'session-chart-plot', width: chartWidth(el) }));
    };
    try {
      switch (rec.id) {
        case 'shuffle_attention': case 'swap_two_tokens': return await product({}, 'The bare layer: f(ΠX) − Π f(X) entry by entry (the course program)');
        case 'index_signal': return await product({ pos: 'index' }, 'With the index signal: f(ΠX) − Π f(X) entry by entry');
        case 'rnn_shuffle': return await product({ layer: 'rnn' }, 'The RNN: f(ΠX) − Π f(X) entry by entry');
        case 'causal_equivariance': return await product({ mask: 'causal' }, 'With the causal mask: f(ΠX) − Π f(X) entry by entry');
        case 'rope_scores': return await scores(st.omega || 'pi/2', 12, `Scores cos(s·ω) for ω = ${st.omega || 'pi/2'}`);
        case 'rope_repeat_half_pi': return await scores('pi/2', 12, 'Scores for ω = π/2: back to 1 at every repeat');
        case 'rope_repeat_chosen': return await scores(st.omega || '3*pi/4', 24, `Scores for ω = ${st.omega || '3*pi/4'}`);
        case 'rope_resolve': return await scores(st.omegas || 'pi/2,pi/3', Math.max(24, Number(st.context || 16)), `The set ${st.omegas || 'pi/2,pi/3'} within L = ${st.context || 16}`, st.context || 16);
        default: put(el);
      }
    } catch (e) { put(el, h('p', { class: 'hint', text: pageMessage(e.message) })); }
  },
  showRecord(rec, text) {
    if (!rec) return;
    setTimeout(() => this.chart(rec), 0);
    put($('session-result'),
      h('div', { class: 'step', id: 'session-record', 'data-correct': String(rec.correct) },
        h('p', { class: 'headline' }, h('span', { class: `badge ${rec.correct ? 'holds' : 'fails'}` }, rec.correct ? 'RIGHT' : 'NOT QUITE'), ` ${rec.title}`),
        scrollBox(h('table', { class: 'numbers' },
          h('tr', {}, h('th', { text: 'your prediction' }), h('td', { id: 'session-prediction', text: answerText(rec.prediction) })),
          h('tr', {}, h('th', { text: 'computed' }), h('td', { id: 'session-computed', text: answerText(rec.result) })),
          h('tr', {}, h('th', { text: 'graded by' }), h('td', { class: 'wrap', text: rec.grading })))),
        h('p', { class: 'phase', 'data-phase': 'run' }, h('strong', { text: '2 · Run. ' }), `computed: ${answerText(rec.result)}`),
        h('p', { class: 'phase', 'data-phase': 'explain' }, h('strong', { text: '3 · Explain. ' }), rec.explanation),
        h('figure', { class: 'pair', id: 'session-chart' }),
        h('details', {}, h('summary', { text: 'Evidence (what the engine computed)' }),
          h('ul', { class: 'findings' }, rec.evidence.map((e) => h('li', { class: 'mono', text: evidenceText(e) })))),
        h('details', { class: 'terminal' }, h('summary', { text: 'As the terminal prints the session so far' }), h('pre', { text }))));
  },
});


// ------------------------------------------------------------------ the real model

/** The page's words for the options of the model commands, for the core's messages. */
const MODEL_FIELDS = { '--text': 'Text', '--perm': 'Permutation', '--layer': 'Layer', '--head': 'Head', '--pos': 'Positions', '--model': 'model', '--ids': 'Text' };

register('model', {
  needs: ['model info', 'model tokenize', 'model attention', 'model order'],
  init() {
    this.ticket = tickets();
    this.loaded = false;
    $('model-run').addEventListener('click', () => this.run());
    $('model-text').addEventListener('keydown', (e) => { if (e.key === 'Enter') this.run(); });
    $('model-perm').addEventListener('keydown', (e) => { if (e.key === 'Enter') this.run(); });
    // A new layer, head or rotation redraws the heat map only (the tokens and the order stay).
    for (const id of ['model-layer', 'model-head', 'model-pos']) $(id).addEventListener('change', () => this.heat(this.ticket()));
  },
  /** The first visit fills the layer and head lists from the model's own file, then runs. */
  async shown() {
    if (this.loaded) return;
    this.loaded = true;
    const live = this.ticket();
    $('model-status').textContent = 'Opening the model…';
    try {
      const info = await api('model info', { model: 'smollm2-135m' });
      if (!live()) return;
      const fill = (id, n) => put($(id), ...Array.from({ length: n }, (_, i) => h('option', { value: String(i), text: String(i) })));
      fill('model-layer', info.layers);
      fill('model-head', info.heads);
      this.info = info;
    } catch (e) {
      if (!live()) return;
      this.loaded = false;
      $('model-status').textContent = '';
      this.fail(e);
      return;
    }
    this.run();
  },
  fail(e) {
    showError($('model-error'), e, MODEL_FIELDS);
    put($('model-tokens')); put($('model-heat')); put($('model-order'));
  },
  body() {
    const text = $('model-text').value;
    if (!text.trim()) throw fieldError('Text', 'empty; type a sentence of at least three tokens');
    const perm = $('model-perm').value.trim();
    if (perm && !/^\s*\d+(\s*,\s*\d+)*\s*$/.test(perm)) throw fieldError('Permutation', `“${perm}” is not a comma-separated list of positions (e.g. 2,0,1)`);
    return { model: 'smollm2-135m', text, perm: perm || undefined };
  },
  async run() {
    const live = this.ticket();
    let body;
    try { body = this.body(); } catch (e) { this.fail(e); return; }
    $('model-status').textContent = 'Running the model…';
    try {
      const tok = await api('model tokenize', { model: body.model, text: body.text, values: 0 });
      if (!live()) return;
      this.tokens = tok.tokens;
      put($('model-tokens'), this.tokenTable(tok));
      await this.heat(live);
      if (!live()) return;
      const order = await api('model order', { ...body, top: 5 });
      if (!live()) return;
      showError($('model-error'), null);
      put($('model-order'), ...this.orderView(order));
      $('model-status').textContent = '';
    } catch (e) {
      if (!live()) return;
      $('model-status').textContent = '';
      this.fail(e);
    }
  },
  tokenTable(tok) {
    return h('div', {},
      h('h3', { text: `Tokens: ${tok.tokens.length} (vocabulary ${tok.vocab}); each id is the row of the embedding table it selects` }),
      scrollBox(h('table', { class: 'data', id: 'model-token-table' },
        h('tr', {}, h('th', { scope: 'col', text: 'position' }), h('th', { scope: 'col', text: 'id' }), h('th', { scope: 'col', text: 'piece' }), h('th', { scope: 'col', text: 'text' })),
        tok.tokens.map((t, i) => h('tr', {}, h('td', { text: String(i) }), h('td', { text: String(t.id) }), h('td', { text: t.piece }), h('td', { text: JSON.stringify(t.text) }))))));
  },
  async heat(live) {
    if (!this.tokens) return;
    let body;
    try { body = this.body(); } catch (e) { this.fail(e); return; }
    const req = { model: body.model, text: body.text, layer: Number($('model-layer').value), head: Number($('model-head').value), pos: $('model-pos').value };
    try {
      const a = await api('model attention', req);
      if (!live()) return;
      showError($('model-error'), null);
      // Rows and columns named by the tokens' text (as the token table shows it), else their pieces.
      const texts = this.tokens && this.tokens.length === a.ids.length ? this.tokens.map((t) => JSON.stringify(t.text)) : (a.pieces || a.ids.map(String));
      const names = texts.map((p, i) => `${i} ${p}`);
      const shares = a.first_token_share === null ? null : h('p', {
        id: 'model-shares',
        text: `Mean weight over queries 1 … ${a.ids.length - 1}: on the first token ${fmt.sig(a.first_token_share, 3)}, on the previous token ${fmt.sig(a.previous_token_share, 3)}, on itself ${fmt.sig(a.self_share, 3)}.`,
      });
      put($('model-heat'), h('h3', { text: `Layer ${a.layer}, head ${a.head} (shares key/value head ${a.kv_head} of ${a.kv_heads}), positions ${a.pos}: who attends to whom` }),
        heatmap(a.weights, { caption: 'Row = query, column = key; each row sums to 1 (causal: a query sees only itself and earlier tokens)', rowLabel: 'query', colLabel: 'key', rowNames: names, colNames: names, kind: 'sequential', id: 'model-weights' }),
        shares);
    } catch (e) {
      if (!live()) return;
      this.fail(e);
    }
  },
  /** The last position's movement per layer against the tolerance, at the width the box has. */
  drawDepth(box) {
    const r = this.order;
    const none = r.depth.find((d) => d.pos === 'none');
    const series = r.depth.map((d, i) => ({
      name: d.pos === 'rope' ? 'RoPE' : 'no RoPE',
      points: d.layers.map((l) => [l.layer, Math.log10(Math.max(l.relative_change, 1e-300))]),
      colour: PALETTE[i],
    }));
    series.push({ name: 'tolerance', points: none.layers.map((l) => [l.layer, Math.log10(l.tolerance)]), colour: '#555', dashed: true });
    put(box, lineChart({ series, xLabel: 'layer', yLabel: 'log10 relative change at the last position', id: 'model-depth', width: chartWidth($('model-order')) }));
  },
  resized() {
    const box = $('model-depth-box');
    if (box && this.order) this.drawDepth(box);
  },
  orderView(r) {
    const pieceOf = (e) => (e.piece === null ? String(e.id) : e.piece);
    const dist = r.distributions.map((d) => h('div', { class: 'dist', 'data-pos': d.pos },
      h('h4', { text: d.pos === 'rope' ? 'With RoPE (as trained)' : 'Rotation removed' }),
      scrollBox(h('table', { class: 'data' },
        h('tr', {}, h('th', { scope: 'col', text: 'rank' }), h('th', { scope: 'col', text: 'text: next token' }), h('th', { scope: 'col', text: 'prob' }), h('th', { scope: 'col', text: 'permuted: next token' }), h('th', { scope: 'col', text: 'prob' })),
        d.text_top.map((e, i) => h('tr', {}, h('td', { text: String(i + 1) }), h('td', { text: pieceOf(e) }), h('td', { text: fmt.sig(e.prob, 3) }),
          h('td', { text: pieceOf(d.permuted_top[i]) }), h('td', { text: fmt.sig(d.permuted_top[i].prob, 3) }))))),
      h('p', { text: `Total-variation distance between the two distributions: ${fmt.sig(d.total_variation, 3)}` })));
    const words = (pos) => r.depth.find((d) => d.pos === pos);
    const say = (d) => (d.first_moved === null
      ? `never moves beyond its round-off tolerance in ${d.layers.length} layers`
      : `first moves after layer ${d.first_moved} (relative change ${fmt.sci(d.layers[d.first_moved].relative_change, 2)} against the tolerance ${fmt.sci(d.layers[d.first_moved].tolerance, 2)})`);
    const none = words('none'), rope = words('rope');
    const bare = r.bare_attention;
    const chartBox = h('div', { class: 'chart', id: 'model-depth-box' });
    this.order = r;
    this.drawDepth(chartBox);
    return [
      h('h3', { text: `The text against its permutation [${r.perm.join(', ')}]` }),
      h('div', { class: 'dists' }, ...dist),
      h('h3', { text: 'Where order enters, layer by layer (the prefix permuted, the last token kept)' }),
      h('ul', { id: 'model-order-facts' },
        h('li', { text: `Bare attention of layer ${bare.layer} (no mask, no rotation): max |Attn(ΠH) − Π·Attn(H)| = ${fmt.sci(bare.max_error, 2)} against the tolerance ${fmt.sci(bare.tolerance, 2)}: ${bare.equivariant ? 'equivariant' : 'NOT equivariant'}.` }),
        h('li', { text: `Causal mask, no rotation: the last position ${say(none)}.` }),
        h('li', { text: `With RoPE: the last position ${say(rope)}.` })),
      chartBox,
    ];
  },
});

window.addEventListener('DOMContentLoaded', start);
