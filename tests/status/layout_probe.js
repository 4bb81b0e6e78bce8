// Measures, in the browser, whether a reader can see every text of the page it is appended to.
// For each non-blank text node: its rendered width (a Range's bounding rect) against its box's
// clientWidth, each of its line boxes against every ancestor that clips (overflow hidden/clip: must lie
// inside; a scroll container: must lie inside what the reader can scroll to, and the container must
// itself be visible), against the page's visible width at the top, and against every other text's line
// boxes (no text drawn over another).  The findings, with the border boxes of the elements that have an
// id, go as JSON into a pre element, id layout-probe.
(function () {
  const EPSILON = 0.5;
  const viewWidth = document.documentElement.clientWidth;
  const style = (el) => getComputedStyle(el);
  const clipping = (el) => style(el).overflowX !== "visible" || style(el).overflowY !== "visible";
  const scrolling = (el) => /auto|scroll/.test(style(el).overflowX + " " + style(el).overflowY);
  const describe = (el) => el.tagName.toLowerCase() + (el.classList.length ? "." + [...el.classList].join(".") : "");
  const paddingBox = (el) => {
    const r = el.getBoundingClientRect();
    const left = r.left + el.clientLeft, top = r.top + el.clientTop;
    return { left, top, right: left + el.clientWidth, bottom: top + el.clientHeight };
  };
  const blockOf = (el) => {
    while (el.parentElement && style(el).display === "inline") el = el.parentElement;
    return el;
  };
  const texts = [], problems = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.data.trim();
    if (!text || node.parentElement.closest("script, style, #layout-probe")) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const rect = range.getBoundingClientRect();
    const box = blockOf(node.parentElement);
    const inner = paddingBox(box);
    const entry = {
      text, element: describe(node.parentElement), box: describe(box),
      content_width: rect.width, box_width: box.clientWidth, lines: [...range.getClientRects()],
    };
    texts.push(entry);
    const report = (why) => problems.push(Object.assign({ why }, entry, { lines: undefined }));
    if (rect.width === 0) report("not rendered");
    if (rect.width > box.clientWidth + EPSILON || rect.left < inner.left - EPSILON || rect.right > inner.right + EPSILON)
      report(`wider than its box (${describe(box)}: ${box.clientWidth}px, content ${rect.width.toFixed(1)}px)`);
    for (const line of entry.lines) {
      let shown = { left: line.left, right: line.right, top: line.top, bottom: line.bottom };
      for (let el = node.parentElement; el && el !== document.documentElement; el = el.parentElement) {
        if (!clipping(el)) continue;
        const pad = paddingBox(el);
        if (scrolling(el)) {
          const left = pad.left - el.scrollLeft, top = pad.top - el.scrollTop;
          if (shown.left < left - EPSILON || shown.right > left + el.scrollWidth + EPSILON || shown.top < top - EPSILON)
            report(`out of reach in scroll container ${describe(el)}`);
          const r = el.getBoundingClientRect();
          shown = { left: r.left, right: r.right, top: r.top, bottom: r.bottom };  // the container must be seen
        } else if (shown.left < pad.left - EPSILON || shown.right > pad.right + EPSILON ||
                   shown.top < pad.top - EPSILON || shown.bottom > pad.bottom + EPSILON) {
          report(`clipped by ${describe(el)} (${el.clientWidth}px wide, scrollWidth ${el.scrollWidth}px)`);
          break;
        }
      }
      if (shown.left < -EPSILON || shown.right > viewWidth + EPSILON)
        report(`past the page's visible width (right edge ${shown.right.toFixed(1)}px of ${viewWidth}px)`);
    }
  }
  const lines = texts.flatMap((t) => t.lines.map((l) => ({ t, l }))).sort((a, b) => a.l.left - b.l.left);
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length && lines[j].l.left < lines[i].l.right - EPSILON; j++) {
      const a = lines[i].l, b = lines[j].l;
      if (lines[i].t !== lines[j].t && a.top < b.bottom - EPSILON && b.top < a.bottom - EPSILON)
        problems.push({ why: `drawn over "${lines[j].t.text.slice(0, 40)}"`, text: lines[i].t.text });
    }
  }
  const out = document.createElement("pre");
  out.id = "layout-probe";
  out.textContent = JSON.stringify({
    view_width: viewWidth,
    texts: texts.map((t) => ({ text: t.text, element: t.element, content_width: t.content_width, box_width: t.box_width })),
    problems,
    boxes: Object.fromEntries([...document.querySelectorAll("body [id]")].map((el) => {
      const r = el.getBoundingClientRect();
      return [el.id, [r.left, r.top, r.right, r.bottom]];
    })),
  });
  document.body.appendChild(out);
})();
