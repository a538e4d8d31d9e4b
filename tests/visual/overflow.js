// Injected into a report page by tests/test_report_visual.py, run by headless Chromium.
// It writes what it finds into the page (a pre element, as JSON), which
// Chromium's --dump-dom prints: nothing leaves the browser any other way.
(() => {
  const findings = [];
  const describe = (el) => {
    let name = el.tagName.toLowerCase();
    if (el.id) name += "#" + el.id;
    if (typeof el.className === "string" && el.className.trim()) {
      name += "." + el.className.trim().split(/\s+/).join(".");
    }
    const text = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 70);
    return `${name} "${text}"`;
  };

  // 1. The page is no wider than the window (nothing pushes it sideways).
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) {
    findings.push(`page is ${root.scrollWidth}px wide in a ${root.clientWidth}px window`);
  }

  // 2. No box's content sticks out of it sideways.
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg") || el.id === "gpuadvisor-layout") continue;
    const style = getComputedStyle(el);
    if (style.display === "inline" || style.display === "none" || el.clientWidth === 0) continue;
    if (style.overflowX === "auto" || style.overflowX === "scroll") continue; // scrolls: meant
    if (el.scrollWidth > el.clientWidth + 1) {
      findings.push(`overflows its box by ${el.scrollWidth - el.clientWidth}px: ${describe(el)}`);
    }
  }

  // 3. No line breaks inside a word: a break between two word characters with no space
  //    between them (a hyphen, a slash or a dot before the break is a fair place).
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("svg, script, style, pre, title")) continue;
    const text = node.data;
    range.selectNodeContents(node);
    if (range.getClientRects().length < 2) continue;
    let lastTop = null;
    let lastChar = "";
    let spaced = false;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (/\s/.test(ch)) { spaced = true; continue; }
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) { spaced = true; continue; }
      if (lastTop !== null && box.top > lastTop + box.height / 2 && !spaced
          && /\w/.test(lastChar) && /\w/.test(ch)) {
        const around = text.slice(Math.max(0, i - 20), i) + "|" + text.slice(i, i + 20);
        findings.push(`word broken across lines: "${around}" in ${describe(parent)}`);
      }
      lastTop = box.top;
      lastChar = ch;
      spaced = false;
    }
  }

  // 4. Chart text stays inside its chart; label lines end left of the plot.
  const svgText = [];
  for (const svg of document.querySelectorAll("svg")) {
    const view = svg.viewBox.baseVal;
    for (const t of svg.querySelectorAll("text")) {
      const b = t.getBBox();
      const style = getComputedStyle(t);
      svgText.push({
        text: t.textContent,
        width: b.width,
        size: parseFloat(style.fontSize),
        bold: parseInt(style.fontWeight, 10) >= 600,
      });
      if (b.x < view.x - 0.5 || b.x + b.width > view.x + view.width + 0.5) {
        findings.push(`chart text outside its chart (x ${b.x.toFixed(1)} to ${(b.x + b.width).toFixed(1)} of ${view.width}): "${t.textContent}"`);
      }
    }
  }

  const out = document.createElement("pre");
  out.id = "gpuadvisor-layout";
  out.textContent = JSON.stringify({
    findings,
    svgText,
    height: root.scrollHeight,
    fonts: getComputedStyle(document.body).fontFamily,
  });
  document.body.appendChild(out);
})();
