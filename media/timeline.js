// The probe-hit timeline webview (extension/timelineView.ts): one lane per
// CPU, each hit of the probe-hit log a mark at the machine-wide instruction
// count it happened at, coloured by kind (entries in the upper half of a
// lane, returns in the lower half). The x axis is that count, not a CPU's
// virtual time: each CPU has its own clock, so by time a later hit on one CPU
// could be drawn left of an earlier one on another; by the machine's
// instructions the marks are in the log's order (its sequence numbers).
// Hits that fall in the same pixel column of a lane and kind share one mark
// (data-count = how many); hover shows the hits, a click asks the extension
// to go to the hit (time travel). The marker is the hit the machine is at.
// Mouse wheel zooms around the pointer, dragging pans, "Fit" shows all.
//
// Messages in:  {type:'reset', title?, empty?} {type:'hits', hits, dropped, lastSeq, nowSeq?} {type:'status', text}
// Messages out: {type:'ready'} {type:'goto', seq} {type:'rendered', ...counts read back from the DOM}
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const { el, scheduler } = /** @type {any} */ (window).hitViewKit;
  const KINDS = ['kprobe', 'kretprobe-entry', 'kretprobe-return', 'jprobe', 'uprobe', 'uretprobe', 'watchpoint'];
  const RETURNS = new Set(['kretprobe-return', 'uretprobe']);
  /** as many records as the log's default ring holds */
  const MAX_HITS = 65536;
  const LANE_H = 30, LABEL_W = 120, AXIS_H = 26, PAD_R = 16, TOP = 16;

  /** @type {any[]} */ let hits = [];
  /** @type {Map<number, any>} */ const bySeq = new Map();
  let dropped = 0, lastSeq = 0;
  /** @type {number | undefined} */ let nowSeq;
  let emptyText = 'No kprobe debug session: start one to record probe hits.';
  /** @type {{t0: number, t1: number} | null} zoom window (null: fit every hit) */
  let view = null;
  /** @type {{hits: any[]}[]} the marks of the last render, by data-g */
  let groups = [];
  /** @type {{x: number, t0: number, t1: number} | null} */ let drag = null;
  /** @type {{t0: number, t1: number, plotW: number}} */ let scale = { t0: 0, t1: 1, plotW: 1 };

  const root = /** @type {HTMLElement} */ (document.getElementById('root'));
  const tooltip = /** @type {HTMLElement} */ (document.getElementById('tooltip'));
  const statusEl = /** @type {HTMLElement} */ (document.getElementById('status'));
  const titleEl = /** @type {HTMLElement} */ (document.getElementById('title'));

  const schedule = scheduler(() => render());

  window.addEventListener('message', e => {
    const m = e.data;
    switch (m?.type) {
      case 'reset':
        hits = []; bySeq.clear(); dropped = 0; lastSeq = 0; nowSeq = undefined; view = null;
        if (m.title) titleEl.textContent = m.title;
        if (m.empty) emptyText = m.empty;
        statusEl.textContent = '';
        schedule();
        break;
      case 'hits':
        for (const h of m.hits) if (!bySeq.has(h.seq)) { hits.push(h); bySeq.set(h.seq, h); }
        if (hits.length > MAX_HITS) for (const h of hits.splice(0, hits.length - MAX_HITS)) bySeq.delete(h.seq);
        dropped = m.dropped; lastSeq = m.lastSeq; nowSeq = m.nowSeq;
        if (m.empty) emptyText = m.empty;
        schedule();
        break;
      case 'status':
        statusEl.textContent = m.text ?? '';
        break;
    }
  });

  /** where a hit is drawn: the machine-wide instructions retired at it (in the order of the log's seq) */
  const pos = (/** @type {any} */ h) => h.instructions;

  /** axis label of a tick at `n` instructions */
  function fmtInsn(n, step) {
    if (step >= 1e6) return `${(n / 1e6).toFixed(step >= 1e7 ? 0 : 1)}M`;
    if (step >= 1e3) return `${(n / 1e3).toFixed(step >= 1e4 ? 0 : 1)}k`;
    return `${Math.round(n)}`;
  }

  /** @param {number} ns */
  function fmtTime(ns) {
    return `${(ns / 1e9).toFixed(9)} s`;
  }

  /** 1, 2 or 5 times a power of ten, about `raw` */
  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    const f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  function render() {
    root.replaceChildren();
    groups = [];
    hideTooltip();
    if (!hits.length) {
      const p = document.createElement('p');
      p.className = 'empty';
      p.textContent = emptyText;
      root.appendChild(p);
      report(null);
      return;
    }
    let tMin = Infinity, tMax = -Infinity;
    const cpuSet = new Set();
    for (const h of hits) { tMin = Math.min(tMin, pos(h)); tMax = Math.max(tMax, pos(h)); cpuSet.add(h.cpu); }
    const cpus = [...cpuSet].sort((a, b) => a - b);
    if (tMax <= tMin) { tMin -= 500; tMax += 500; }
    const pad = (tMax - tMin) * 0.01;
    const t0 = view ? view.t0 : tMin - pad, t1 = view ? view.t1 : tMax + pad;
    const width = Math.max(360, root.clientWidth || document.body.clientWidth || 800);
    const plotW = width - LABEL_W - PAD_R;
    scale = { t0, t1, plotW };
    const x = (/** @type {number} */ t) => LABEL_W + (t - t0) / (t1 - t0) * plotW;

    // toolbar: counts per kind in the window, the log's drops, Fit
    const inWindow = hits.filter(h => pos(h) >= t0 && pos(h) <= t1);
    const perKind = new Map();
    for (const h of inWindow) perKind.set(h.kind, (perKind.get(h.kind) ?? 0) + 1);
    const bar = document.createElement('div');
    bar.className = 'toolbar';
    const legend = document.createElement('span');
    legend.className = 'legend';
    for (const k of KINDS) {
      if (!perKind.has(k)) continue;
      const item = document.createElement('span');
      const sw = document.createElement('span');
      sw.className = `swatch kind-${k}`;
      item.append(sw, `${k} ${perKind.get(k)}`);
      legend.appendChild(item);
    }
    const info = document.createElement('span');
    info.textContent = `${inWindow.length} of ${hits.length} hits shown` + (dropped ? `, ${dropped} older hits dropped by the log's ring buffer` : '');
    const fit = document.createElement('button');
    fit.textContent = 'Fit';
    fit.title = 'Show every hit (mouse wheel zooms, drag pans)';
    fit.addEventListener('click', () => { view = null; schedule(); });
    bar.append(legend, info, fit);
    root.appendChild(bar);

    const height = TOP + cpus.length * LANE_H + AXIS_H;
    const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'probe hits per CPU by the machine\'s instructions retired (the log\'s order)' });
    root.appendChild(svg);
    const laneY = new Map();
    cpus.forEach((c, i) => {
      const y = TOP + i * LANE_H;
      laneY.set(c, y);
      el('rect', { class: 'lane', x: LABEL_W, y: y + 1, width: plotW, height: LANE_H - 2, 'data-cpu': c }, svg);
      const label = el('text', { x: 4, y: y + LANE_H / 2 + 4 }, svg);
      label.textContent = `CPU ${c}`;
    });

    // one mark per (cpu, kind, pixel column)
    const byKey = new Map();
    for (const h of inWindow) {
      const col = Math.floor(x(pos(h)));
      const key = `${h.cpu}|${h.kind}|${col}`;
      let g = byKey.get(key);
      if (!g) { g = { cpu: h.cpu, kind: h.kind, col, hits: [] }; byKey.set(key, g); }
      g.hits.push(h);
    }
    const half = (LANE_H - 6) / 2;
    for (const g of byKey.values()) {
      const y = laneY.get(g.cpu) + 3 + (RETURNS.has(g.kind) ? half : 0);
      const i = groups.push(g) - 1;
      el('rect', {
        class: `hit kind-${g.kind}`, x: g.col - 1, y, width: 3, height: half,
        'data-g': i, 'data-count': g.hits.length, 'data-kind': g.kind, 'data-seq': g.hits[0].seq,
      }, svg);
    }

    // instructions axis (all CPUs together)
    const axisY = TOP + cpus.length * LANE_H + 4;
    el('text', { x: 4, y: axisY + 16 }, svg).textContent = 'instructions';
    el('line', { class: 'axis', x1: LABEL_W, x2: LABEL_W + plotW, y1: axisY, y2: axisY }, svg);
    const step = niceStep((t1 - t0) / Math.max(1, plotW / 110));
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const tx = x(t);
      el('line', { class: 'axis', x1: tx, x2: tx, y1: axisY, y2: axisY + 4 }, svg);
      const label = el('text', { x: tx, y: axisY + 16, 'text-anchor': 'middle' }, svg);
      label.textContent = fmtInsn(t, step);
    }

    // the hit the machine is at (stopped / gone to), else the newest
    const at = nowSeq !== undefined ? bySeq.get(nowSeq) : hits[hits.length - 1];
    if (at && pos(at) >= t0 && pos(at) <= t1) {
      const nx = x(pos(at));
      el('line', { class: 'now', x1: nx, x2: nx, y1: TOP - 4, y2: axisY, 'data-seq': at.seq }, svg);
      const label = el('text', { class: 'now-label', x: Math.min(nx + 3, width - 80), y: TOP - 5 }, svg);
      label.textContent = `${nowSeq !== undefined ? 'now' : 'latest'} #${at.seq}`;
    }

    svg.addEventListener('mousemove', onMove);
    svg.addEventListener('mouseleave', hideTooltip);
    svg.addEventListener('click', onClick);
    svg.addEventListener('wheel', onWheel, { passive: false });
    svg.addEventListener('mousedown', e => { drag = { x: e.clientX, t0: scale.t0, t1: scale.t1 }; });
    report(svg);
  }

  /** what was drawn, read back from the DOM, to the extension */
  function report(/** @type {Element | null} */ svg) {
    const marks = svg ? [...svg.querySelectorAll('rect.hit')] : [];
    /** @type {Record<string, number>} */ const kinds = {};
    let drawn = 0;
    for (const m of marks) {
      const n = Number(m.getAttribute('data-count'));
      const k = String(m.getAttribute('data-kind'));
      drawn += n;
      kinds[k] = (kinds[k] ?? 0) + n;
    }
    const now = svg?.querySelector('line.now');
    vscode.postMessage({
      type: 'rendered', view: 'timeline',
      hits: drawn, marks: marks.length, kinds,
      lanes: svg ? svg.querySelectorAll('rect.lane').length : 0,
      markerSeq: now ? Number(now.getAttribute('data-seq')) : undefined,
      // the first hit of each mark, left to right (same column: by seq)
      seqByX: marks.map(m => ({ x: Number(m.getAttribute('x')), seq: Number(m.getAttribute('data-seq')) }))
        .sort((a, b) => a.x - b.x || a.seq - b.seq).map(m => m.seq),
      lastSeq, dropped,
      empty: svg ? undefined : root.textContent,
    });
  }

  /** @param {MouseEvent} e */
  function groupAt(e) {
    const t = /** @type {Element} */ (e.target);
    const g = t?.closest?.('rect.hit');
    return g ? groups[Number(g.getAttribute('data-g'))] : undefined;
  }

  /** @param {MouseEvent} e */
  function onMove(e) {
    if (drag && e.buttons === 1) {
      const dt = (e.clientX - drag.x) / scale.plotW * (drag.t1 - drag.t0);
      if (Math.abs(e.clientX - drag.x) > 2) { view = { t0: drag.t0 - dt, t1: drag.t1 - dt }; schedule(); }
      return;
    }
    const g = groupAt(e);
    if (!g) return hideTooltip();
    const lines = [];
    for (const h of g.hits.slice(0, 3)) {
      lines.push(`#${h.seq}  ${h.probe}  (${h.kind})`,
        `  CPU ${h.cpu}  ${h.comm}[${h.pid}]  ${fmtTime(h.timeNs)}  insn ${h.instructions}`);
      if (h.latencyNs !== undefined) lines.push(`  latency ${h.latencyNs} ns`);
      for (const o of h.output.slice(0, 4)) lines.push(`  > ${o.replace(/\n$/, '')}`);
    }
    if (g.hits.length > 3) lines.push(`+${g.hits.length - 3} more hits here (zoom in with the mouse wheel)`);
    lines.push('click: go to this hit');
    tooltip.textContent = lines.join('\n');
    tooltip.hidden = false;
    const r = tooltip.getBoundingClientRect();
    tooltip.style.left = `${Math.min(e.clientX + 12, window.innerWidth - r.width - 4)}px`;
    tooltip.style.top = `${Math.min(e.clientY + 12, window.innerHeight - r.height - 4)}px`;
  }

  function hideTooltip() { tooltip.hidden = true; }

  /** @param {MouseEvent} e */
  function onClick(e) {
    const moved = drag && Math.abs(e.clientX - drag.x) > 2;
    drag = null;
    if (moved) return;
    const g = groupAt(e);
    if (!g) return;
    statusEl.textContent = `going to hit #${g.hits[0].seq}...`;
    vscode.postMessage({ type: 'goto', seq: g.hits[0].seq });
  }

  /** @param {WheelEvent} e */
  function onWheel(e) {
    e.preventDefault();
    const { t0, t1, plotW } = scale;
    const svg = /** @type {Element} */ (e.currentTarget);
    const px = e.clientX - svg.getBoundingClientRect().left - LABEL_W;
    const at = t0 + Math.max(0, Math.min(1, px / plotW)) * (t1 - t0);
    const f = e.deltaY < 0 ? 1 / 1.25 : 1.25;
    const span = Math.max(20, (t1 - t0) * f);
    const left = (at - t0) / (t1 - t0);
    view = { t0: at - left * span, t1: at - left * span + span };
    schedule();
  }

  window.addEventListener('mouseup', () => { setTimeout(() => { drag = null; }, 0); });
  vscode.postMessage({ type: 'ready' });
})();
