// What the hit webviews (media/timeline.js, media/histograms.js) share:
// SVG element building and one render per animation frame. Loaded before
// the view's own script (extension/webviewHtml.ts).
// @ts-check
(function () {
  const SVG = 'http://www.w3.org/2000/svg';

  /** @param {string} tag @param {Record<string, string | number>} attrs @param {Element} [parent] */
  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (parent) parent.appendChild(e);
    return e;
  }

  /** `render` at the next animation frame, once however often this is called before it; also on resize. @param {() => void} render */
  function scheduler(render) {
    let pending = false;
    const schedule = () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; render(); });
    };
    window.addEventListener('resize', schedule);
    return schedule;
  }

  /** @type {any} */ (window).hitViewKit = { SVG, el, scheduler };
})();
