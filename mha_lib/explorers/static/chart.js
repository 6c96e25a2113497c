// The explorers' charts (points, polygons, lines, bars, boxes on axes), drawn as SVG from the numbers the kernel
// sends (see mha_lib/explorers/chart.py). Traits: `scheme` (the panels: size, axis labels, legend; changes with the
// layout) and `data` (per setting: caption, each panel's limits, ticks, title and marks). Every text is set with
// textContent: what a student types is shown as typed, never as HTML.

const SVG = "http://www.w3.org/2000/svg";
const make = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
};
function svg(parent, tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
  if (text != null) lines(e, text);
  parent.appendChild(e);
  return e;
}
function lines(e, text) { // "a\nb": one tspan a line, the block centred on y
  const parts = String(text).split("\n");
  if (parts.length === 1) { e.textContent = parts[0]; return; }
  parts.forEach((t, i) => {
    const s = document.createElementNS(SVG, "tspan");
    s.setAttribute("x", e.getAttribute("x") || 0);
    s.setAttribute("dy", i ? "1.15em" : `${-0.575 * (parts.length - 1)}em`);
    s.textContent = t;
    e.appendChild(s);
  });
}

function niceTicks(lo, hi, log) { // about five round values in [lo, hi]
  if (log) {
    const out = [];
    for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) out.push([10 ** e, `10${[...String(e)].map((c) => "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"["0123456789-".indexOf(c)]).join("")}`]);
    return out;
  }
  const raw = (hi - lo) / 5, mag = 10 ** Math.floor(Math.log10(raw || 1)), f = raw / mag;
  const step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag, digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push([v, (Math.abs(v) < step / 2 ? 0 : v).toFixed(digits)]);
  return out;
}

function star(cx, cy, r) { // a five-pointed star of outer radius r
  const pts = [];
  for (let k = 0; k < 10; k++) {
    const a = -Math.PI / 2 + (k * Math.PI) / 5, q = k % 2 ? 0.45 * r : r;
    pts.push(`${(cx + q * Math.cos(a)).toFixed(1)},${(cy + q * Math.sin(a)).toFixed(1)}`);
  }
  return pts.join(" ");
}

const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

// Labels next to their points: each takes the first of 16 places (its preferred direction first) that stays in the
// panel and off the labels placed before it and off every point.
function placeLabels(g, items, frame, taken) {
  const texts = items.map((it) => {
    const t = svg(g, "text", { class: "mha-chart-label", fill: it.color, "font-weight": it.bold ? "bold" : null }, it.text);
    t.setAttribute("dir", "auto");
    return t;
  });
  const boxes = texts.map((t) => t.getBBox()); // every label measured in one layout, then placed
  items.forEach((it, index) => {
    const t = texts[index], w = boxes[index].width, h = boxes[index].height, pref = Math.atan2(it.dir[1], it.dir[0]);
    let best = null;
    for (let k = 0; k < 16 && !best; k++) {
      const a = pref + (k % 2 ? 1 : -1) * Math.ceil(k / 2) * (Math.PI / 4) * (k < 8 ? 1 : 0.5), far = k < 8 ? 1 : 1.9;
      const dx = Math.cos(a), dy = Math.sin(a), gap = (it.gap || 8) * far;
      const x = it.x + dx * gap - (dx < -0.3 ? w : dx > 0.3 ? 0 : w / 2), y = it.y + dy * gap - (dy < -0.3 ? h : dy > 0.3 ? 0 : h / 2);
      const r = { x, y, width: w, height: h };
      const inside = x >= frame.x && y >= frame.y && x + w <= frame.x + frame.width && y + h <= frame.y + frame.height;
      if (inside && !taken.some((o) => overlaps(r, o))) best = r;
    }
    best = best || { x: it.x + 6, y: it.y - h - 4, width: w, height: h };
    t.setAttribute("x", best.x);
    t.setAttribute("y", best.y + 0.8 * h);
    taken.push(best);
  });
}

function drawMarks(g, marks, sx, sy, frame) {
  const labels = [], taken = [], values = [];
  for (const m of marks) {
    const pts = (m.points || []).map(([x, y]) => [sx(x), sy(y)]);
    const style = { fill: m.fill || "none", stroke: m.stroke || "none", "stroke-width": m.width || 1, opacity: m.opacity };
    if (m.type === "polygon") svg(g, "polygon", { ...style, points: pts.map((p) => p.join(",")).join(" ") });
    else if (m.type === "line") svg(g, "polyline", { ...style, fill: "none", "stroke-dasharray": m.dash, points: pts.map((p) => p.join(",")).join(" ") });
    else if (m.type === "bars") {
      const y0 = sy(m.base || 0), half = (sx(1) - sx(0)) * (m.bar || 0.8) / 2;
      m.values.forEach((v, i) => {
        const x = sx(m.x ? m.x[i] : i), y = sy(v);
        svg(g, "rect", { class: "mha-chart-bar", x: x - half, y: Math.min(y, y0), width: 2 * half, height: Math.abs(y0 - y), fill: m.colors[i % m.colors.length], stroke: m.stroke || "none" });
        if (!(m.texts && m.texts[i])) return;
        values.push([svg(g, "text", { class: "mha-chart-value", x, y: y - 4, "text-anchor": "middle" }, m.texts[i]), 2 * half / 0.8 - 2]);
      });
    } else if (m.type === "rect") {
      const x0 = sx(m.x), x1 = sx(m.x + m.w), y0 = sy(m.y), y1 = sy(m.y + m.h);
      svg(g, "rect", { ...style, x: Math.min(x0, x1), y: Math.min(y0, y1), width: Math.abs(x1 - x0), height: Math.abs(y1 - y0), "stroke-width": m.width || 1.5 });
      if (m.text != null) svg(g, "text", { class: "mha-chart-box-text", x: (x0 + x1) / 2, y: (y0 + y1) / 2, fill: m.color || "#000", "font-weight": m.bold ? "bold" : null }, m.text);
    } else if (m.type === "text") svg(g, "text", { class: "mha-chart-text", x: sx(m.x), y: sy(m.y), "text-anchor": m.anchor || "start", fill: m.color || "#000" }, m.text);
    else if (m.type === "points") {
      const c = pts.reduce((s, p) => [s[0] + p[0] / pts.length, s[1] + p[1] / pts.length], [0, 0]);
      pts.forEach(([x, y], i) => {
        const r = (m.sizes ? m.sizes[i] : m.size || 6), fill = m.colors[i % m.colors.length], op = m.alphas ? m.alphas[i] : 1;
        const attrs = { class: "mha-chart-point", fill, stroke: "#000", "stroke-width": 0.8, opacity: op };
        if (m.shape === "star") svg(g, "polygon", { ...attrs, points: star(x, y, r) });
        else svg(g, "circle", { ...attrs, cx: x, cy: y, r });
        taken.push({ x: x - r, y: y - r, width: 2 * r, height: 2 * r });
        const text = m.labels && m.labels[i];
        if (text) {
          const d = m.dir ? [m.dir[0], -m.dir[1]] : [x - c[0], y - c[1]];
          labels.push({ text, x, y, dir: Math.hypot(...d) > 1e-6 ? d : [0, -1], color: m.label_colors ? m.label_colors[i] : "#000", bold: m.bold, gap: r + 3 });
        }
      });
    }
  }
  const wide = values.map(([t]) => t.getComputedTextLength()); // measured together: one layout
  values.forEach(([t, room], k) => { // a value wider than its slot: smaller
    if (wide[k] > room) t.style.fontSize = `${Math.max(7, (11 * room) / wide[k]).toFixed(1)}px`;
  });
  placeLabels(g, labels, frame, taken);
}

function drawPanel(p, spec, d, width) {
  const H = spec.height || 300, W = Math.max(160, width);
  p.title.textContent = d.title || "";
  p.svg.replaceChildren();
  p.svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  p.svg.setAttribute("width", W);
  p.svg.setAttribute("height", H);
  const xt = d.xticks || niceTicks(d.x[0], d.x[1]), yt = d.yticks || niceTicks(d.y[0], d.y[1], spec.ylog);
  const axes = spec.axes !== false, longY = Math.max(0, ...yt.map((t) => String(t[1]).length));
  const slot = (W - 80) / Math.max(1, xt.length), longX = Math.max(0, ...xt.map((t) => Math.max(...String(t[1]).split("\n").map((s) => [...s].length))));
  const turn = axes && xt.length > 1 && longX * 7.2 > slot, rowsX = Math.max(1, ...xt.map((t) => String(t[1]).split("\n").length));
  const left = axes ? 14 + (spec.ylabel ? 18 : 0) + 7.5 * (yt.length ? longY : 0) : 6, right = 10, top = 8;
  const bottom = axes ? (!xt.length ? 6 : turn ? 14 + 0.6 * 7.5 * longX : 8 + 16 * rowsX) + (spec.xlabel ? 18 : 0) : 6;
  const fr = { x: left, y: top, width: W - left - right, height: H - top - bottom };
  const lin = (lo, hi, a, b) => (v) => a + ((v - lo) / (hi - lo || 1)) * (b - a);
  const sx = lin(d.x[0], d.x[1], fr.x, fr.x + fr.width);
  const sy = spec.ylog ? (v) => lin(Math.log10(d.y[0]), Math.log10(d.y[1]), fr.y + fr.height, fr.y)(Math.log10(Math.max(v, d.y[0]))) : lin(d.y[0], d.y[1], fr.y + fr.height, fr.y);
  const g = svg(p.svg, "g");
  if (axes) {
    svg(g, "rect", { class: "mha-chart-frame", ...fr });
    for (const [v, t] of yt) {
      const y = sy(v);
      if (spec.grid) svg(g, "line", { class: "mha-chart-grid", x1: fr.x, x2: fr.x + fr.width, y1: y, y2: y });
      svg(g, "line", { class: "mha-chart-tick", x1: fr.x - 4, x2: fr.x, y1: y, y2: y });
      svg(g, "text", { class: "mha-chart-tick-label", x: fr.x - 6, y, "text-anchor": "end", "dominant-baseline": "middle" }, t);
    }
    for (const [v, t] of xt) {
      const x = sx(v), y = fr.y + fr.height;
      if (spec.grid) svg(g, "line", { class: "mha-chart-grid", x1: x, x2: x, y1: fr.y, y2: y });
      svg(g, "line", { class: "mha-chart-tick", x1: x, x2: x, y1: y, y2: y + 4 });
      const label = svg(g, "text", { class: "mha-chart-tick-label", x, y: y + 8 + 6 * rowsX, "text-anchor": turn ? "end" : "middle", "dominant-baseline": "middle" }, t);
      label.setAttribute("dir", "auto");
      if (turn) label.setAttribute("transform", `rotate(-35 ${x} ${y + 10})`), label.setAttribute("y", y + 10);
    }
    if (spec.xlabel) svg(g, "text", { class: "mha-chart-axis", x: fr.x + fr.width / 2, y: H - 5, "text-anchor": "middle" }, spec.xlabel);
    if (spec.ylabel) svg(g, "text", { class: "mha-chart-axis", x: 0, y: 0, "text-anchor": "middle", transform: `translate(12 ${fr.y + fr.height / 2}) rotate(-90)` }, spec.ylabel);
  }
  const clip = svg(g, "g");
  drawMarks(clip, d.marks || [], sx, sy, fr);
}

function render({ model, el }) {
  const view = Math.random().toString(36).slice(2, 10);
  el.classList.add("mha-chart");
  const caption = make("div", "mha-chart-caption"), row = make("div", "mha-chart-row"), footer = make("div", "mha-chart-footer");
  el.append(caption, row, footer);
  let panels = [], frame = 0, queued = false;

  function build() {
    const scheme = model.get("scheme") || {};
    row.replaceChildren();
    panels = (scheme.panels || []).map((spec) => {
      const p = { spec, root: make("div", "mha-chart-panel"), title: make("div", "mha-chart-title") };
      p.title.dir = "auto";
      p.root.style.flex = `${spec.width || 1} 1 0`;
      if (spec.max_width) p.root.style.maxWidth = `${spec.max_width}px`;
      p.root.dataset.key = spec.key;
      const legend = make("div", "mha-chart-legend");
      for (const item of spec.legend || []) {
        const key = make("span", `mha-chart-swatch mha-chart-${item.shape || "area"}`, item.shape === "star" ? "★" : null);
        key.style[item.shape === "star" ? "color" : "background"] = item.color;
        const entry = make("span", "mha-chart-key");
        entry.append(key, make("span", null, item.label));
        legend.appendChild(entry);
      }
      p.svg = document.createElementNS(SVG, "svg");
      p.root.append(p.title, p.svg, legend);
      row.appendChild(p.root);
      return p;
    });
  }

  function update(resized) { // a new frame for new data; a resize only draws again at the new width
    queued = false;
    const data = model.get("data") || {};
    caption.textContent = data.caption || "";
    footer.textContent = data.footer || "";
    const shown = panels.map((p) => (data.panels || {})[p.spec.key]);
    panels.forEach((p, k) => { p.root.style.display = shown[k] ? "" : "none"; });
    const widths = panels.map((p, k) => (shown[k] ? p.root.clientWidth || 400 : 0)); // read before any drawing
    panels.forEach((p, k) => { if (shown[k]) drawPanel(p, p.spec, shown[k], widths[k]); });
    if (resized === true) return;
    el.dataset.frame = `${view}.${++frame}`;
    el.dispatchEvent(new CustomEvent("mha-drawn", { bubbles: true, detail: { frame } }));
  }

  const later = () => { if (!queued) { queued = true; queueMicrotask(() => update()); } };
  const rebuild = () => { build(); later(); };
  model.on("change:scheme", rebuild);
  model.on("change:data", later);
  let lastWidth = 0;
  const resize = new ResizeObserver(() => {
    if (Math.abs(el.clientWidth - lastWidth) > 2 && !queued) { lastWidth = el.clientWidth; update(true); }
  });
  resize.observe(el);
  build();
  update();
  return () => { resize.disconnect(); model.off("change:scheme", rebuild); model.off("change:data", later); };
}

export default { render };
