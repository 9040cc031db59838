// The kretprobe latency histogram webview (extension/histogramView.ts): one
// section per kretprobe, its log2 buckets of entry->return virtual ns as
// horizontal bars (labels as bpftrace prints them: [1K, 2K)), then the text
// bpftrace's hist() prints.
//
// Messages in:  {type:'reset', title?, empty?} {type:'histograms', histograms, empty?} {type:'status', text}
// Messages out: {type:'ready'} {type:'rendered', ...counts read back from the DOM}
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const { el, scheduler } = /** @type {any} */ (window).hitViewKit;
  const ROW_H = 18, LABEL_W = 130, COUNT_W = 70, PAD_R = 16;

  /** @type {any[]} */ let histograms = [];
  let emptyText = 'No kprobe debug session: start one to record kretprobe latencies.';

  const root = /** @type {HTMLElement} */ (document.getElementById('root'));
  const statusEl = /** @type {HTMLElement} */ (document.getElementById('status'));
  const titleEl = /** @type {HTMLElement} */ (document.getElementById('title'));

  const schedule = scheduler(() => render());

  window.addEventListener('message', e => {
    const m = e.data;
    switch (m?.type) {
      case 'reset':
        histograms = [];
        if (m.title) titleEl.textContent = m.title;
        if (m.empty) emptyText = m.empty;
        statusEl.textContent = '';
        schedule();
        break;
      case 'histograms':
        histograms = m.histograms;
        if (m.empty) emptyText = m.empty;
        schedule();
        break;
      case 'status':
        statusEl.textContent = m.text ?? '';
        break;
    }
  });

  /** a bucket bound as bpftrace prints it: 512, 1K, 2M... (powers of 1024) */
  function size(n) {
    for (const [shift, suffix] of [[60, 'E'], [50, 'P'], [40, 'T'], [30, 'G'], [20, 'M'], [10, 'K']]) {
      const unit = Math.pow(2, /** @type {number} */ (shift));
      if (n >= unit && n % unit === 0) return `${n / unit}${suffix}`;
    }
    return String(n);
  }

  /** [lo, hi) as bpftrace labels it; a one-value bucket as [lo] */
  function label(b) {
    return b.hi - b.lo <= 1 ? `[${size(b.lo)}]` : `[${size(b.lo)}, ${size(b.hi)})`;
  }

  function render() {
    root.replaceChildren();
    if (!histograms.length) {
      const p = document.createElement('p');
      p.className = 'empty';
      p.textContent = emptyText;
      root.appendChild(p);
      report();
      return;
    }
    const width = Math.max(360, root.clientWidth || document.body.clientWidth || 800);
    const barW = width - LABEL_W - COUNT_W - PAD_R;
    for (const h of histograms) {
      const section = document.createElement('section');
      section.className = 'histogram';
      section.dataset.probe = h.probe;
      const title = document.createElement('h2');
      title.textContent = `@latency_ns[${h.probe}]`;
      const total = h.buckets.reduce((s, b) => s + b.count, 0);
      const summary = document.createElement('div');
      summary.className = 'summary';
      summary.textContent = `${total} return${total === 1 ? '' : 's'}, entry -> return in virtual ns (log2 buckets)`;
      section.append(title, summary);
      const max = Math.max(1, ...h.buckets.map(b => b.count));
      const height = h.buckets.length * ROW_H + 4;
      const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `latency histogram of ${h.probe}` });
      h.buckets.forEach((b, i) => {
        const y = 2 + i * ROW_H;
        const t = el('text', { x: LABEL_W - 8, y: y + ROW_H - 5, 'text-anchor': 'end' }, svg);
        t.textContent = label(b);
        const w = b.count ? Math.max(1, Math.round(b.count / max * barW)) : 0;
        const bar = el('rect', { class: 'bar', x: LABEL_W, y: y + 2, width: w, height: ROW_H - 4, 'data-count': b.count, 'data-lo': b.lo, 'data-hi': b.hi }, svg);
        const tip = el('title', {}, bar);
        tip.textContent = `${label(b)} ns: ${b.count}`;
        const c = el('text', { class: 'count', x: LABEL_W + w + 6, y: y + ROW_H - 5 }, svg);
        c.textContent = String(b.count);
      });
      section.appendChild(svg);
      const pre = document.createElement('pre');
      pre.className = 'bpftrace';
      pre.textContent = h.text;
      section.appendChild(pre);
      root.appendChild(section);
    }
    report();
  }

  /** what was drawn, read back from the DOM, to the extension */
  function report() {
    const sections = [...root.querySelectorAll('section.histogram')];
    vscode.postMessage({
      type: 'rendered', view: 'histograms',
      histograms: sections.map(s => {
        const bars = [...s.querySelectorAll('rect.bar')];
        return {
          probe: s.getAttribute('data-probe'),
          bars: bars.length,
          count: bars.reduce((n, b) => n + Number(b.getAttribute('data-count')), 0),
          text: s.querySelector('pre.bpftrace')?.textContent ?? '',
        };
      }),
      empty: sections.length ? undefined : root.textContent,
    });
  }

  vscode.postMessage({ type: 'ready' });
})();
