// The explorers' live picture: the kernel sends numbers, this module draws them at the screen's own resolution.
// Model traits (see mha_lib/explorers/widget.py): `scheme` (panels, labels, colour maps: changes when the layout
// does), `texts` (caption, titles, what is hidden: small, per setting) and `arrays` (the matrices: float32
// buffers, NaN = masked cell). Text typed by a student is set with textContent only: it is never HTML.

const make = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
};

function floats(entry) { // {shape, values: DataView | ArrayBuffer} -> Float32Array (copied: aligned)
  const v = entry.values, buf = v.buffer || v, off = v.byteOffset || 0, len = v.byteLength;
  return new Float32Array(buf.slice(off, off + len));
}

function rgb(hex) { return [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)); }

function colour(lut, frac) { return lut[Math.max(0, Math.min(lut.length - 1, Math.round(frac * (lut.length - 1))))]; }

function label(text, cls) { // a token or title as typed, right-to-left text kept in its own direction
  const s = make("span", cls, text);
  s.dir = "auto";
  s.title = text;
  return s;
}

// One group of heatmaps sharing a scale: h panels of (n, m) matrices in `ncols` columns, a colour bar, a key.
function buildGrid(spec, luts) {
  const g = { spec, lut: luts[spec.cmap], panels: [] };
  const root = make("div", "mha-group");
  root.dataset.key = spec.key;
  const title = make("div", "mha-group-title");
  const heads = make("div", "mha-heads");
  heads.style.gridTemplateColumns = `repeat(${spec.ncols}, max-content)`;
  const { h, n, m } = spec;
  for (let i = 0; i < h; i++) {
    const first = i % spec.ncols === 0, bottom = i + spec.ncols >= h;
    const p = { root: make("div", "mha-panel") };
    p.title = label(spec.titles[i] || "", "mha-title");
    p.note = make("div", "mha-note");
    const body = make("div", "mha-body");
    const ylab = make("div", "mha-ylab");
    if (first && spec.rows) spec.rows.forEach((t) => ylab.appendChild(label(t, "mha-tok")));
    if (first && spec.row_label) body.appendChild(label(spec.row_label, "mha-axis-y"));
    else body.appendChild(make("span"));
    body.appendChild(ylab);
    p.box = make("div", "mha-box");
    p.box.style.width = `calc(var(--cell) * ${m})`;
    p.box.style.height = `calc(var(--cell) * ${n})`;
    p.canvas = make("canvas");
    p.canvas.width = m;
    p.canvas.height = n;
    p.box.appendChild(p.canvas);
    if (n * m <= 1024) { // a cell element each: numbers, the masked hatch
      p.cells = make("div", "mha-cells");
      p.cells.style.gridTemplateColumns = `repeat(${m}, 1fr)`;
      for (let k = 0; k < n * m; k++) p.cells.appendChild(make("div", "mha-cell"));
      p.box.appendChild(p.cells);
    }
    body.appendChild(p.box);
    body.appendChild(make("span"));
    body.appendChild(make("span"));
    p.xlab = make("div", "mha-xlab");
    if (bottom && spec.cols) spec.cols.forEach((t) => p.xlab.appendChild(label(t, "mha-tok")));
    body.appendChild(p.xlab);
    p.root.append(p.title, p.note, body);
    if (bottom && spec.col_label) p.root.appendChild(label(spec.col_label, "mha-axis-x"));
    heads.appendChild(p.root);
    g.panels.push(p);
  }
  const side = make("div", "mha-side");
  if (spec.cbar !== null) {
    g.cbar = make("div", "mha-cbar");
    g.cbar.style.background = `linear-gradient(to top, ${spec.stops.join(", ")})`;
    g.ticks = [0, 1, 2].map(() => make("span", "mha-tick"));
    const ticks = make("div", "mha-ticks");
    ticks.append(...g.ticks);
    const wrap = make("div", "mha-cbar-wrap");
    wrap.append(g.cbar, ticks, label(spec.cbar || "", "mha-cbar-label"));
    side.appendChild(wrap);
  }
  g.key = make("div", "mha-key");
  g.key.append(make("span", "mha-swatch"), label(spec.mask_label || "masked"));
  side.appendChild(g.key);
  const row = make("div", "mha-grid-row");
  row.append(heads, side);
  root.append(title, row);
  root.style.gridArea = spec.area || "";
  root.classList.toggle("mha-strip", !!spec.strip);
  g.root = root;
  g.title = title;
  return g;
}

function fmtNumber(v, digits) { const s = v.toFixed(digits); return s === "-0." + "0".repeat(digits) ? s.slice(1) : s; }

// lecture mode: a weight in [0, 1] without its leading zero (".25"), 0 and 1 as "0" and "1": three characters at
// most, so the numbers are large enough to read from the back of a hall (3.3 % of the window's height)
const ems = (t) => [...t].reduce((w, c) => w + (c >= "0" && c <= "9" ? 0.64 : 0.36), 0); // DejaVu Sans: width in em
const short01 = (s) => (/^1\.0+$/.test(s) ? "1" : /^0\.0+$/.test(s) ? "0" : s.replace(/^0\./, "."));

function drawGrid(g, entry) {
  const { spec, lut } = g, { n, m } = spec;
  const values = floats(entry), lo = entry.lo, hi = entry.hi, span = hi > lo ? hi - lo : 1;
  let masked = false, widest = 0.64;
  g.panels.forEach((p, i) => {
    const ctx = p.canvas.getContext("2d"), img = ctx.createImageData(m, n);
    for (let k = 0; k < n * m; k++) {
      const v = values[i * n * m + k], frac = (v - lo) / span;
      const c = Number.isNaN(v) ? [200, 200, 200] : colour(lut, frac);
      img.data.set([c[0], c[1], c[2], 255], 4 * k);
      if (!p.cells) continue;
      const cell = p.cells.children[k];
      if (Number.isNaN(v)) { masked = true; cell.textContent = ""; cell.className = "mha-cell mha-masked"; continue; }
      const plain = spec.numbers ? fmtNumber(v, spec.digits) : "", text = g.lecture && !spec.signed ? short01(plain) : plain;
      widest = Math.max(widest, ems(text));
      cell.textContent = text;
      const white = spec.signed ? Math.abs(frac - 0.5) > 0.3 : frac < 0.6;
      cell.className = white ? "mha-cell mha-white" : "mha-cell";
    }
    ctx.putImageData(img, 0, 0);
  });
  g.widest = widest;
  g.key.style.display = masked ? "" : "none";
  // lecture: signed ticks with as few decimals as their size needs ("-146", "-1.3", "-0.25"), short enough to read
  const top = Math.max(Math.abs(lo), Math.abs(hi)), places = top >= 10 ? 0 : top >= 1 ? 1 : 2;
  const tick = (v) => (!g.lecture ? fmtNumber(v, 2) : spec.signed ? fmtNumber(v, places) : short01(fmtNumber(v, 2)));
  if (g.ticks) [hi, (lo + hi) / 2, lo].forEach((v, k) => { g.ticks[k].textContent = tick(v); });
}

function fitPass(pic) {
  for (const g of pic.groups) g.cellFit = undefined;
  fitOnce(pic);
  if (pic.groups.some((g) => g.spec.same)) fitOnce(pic);
}

// On the full-window screen nothing scrolls: when the picture (its caption and footer too) reaches past the
// window's bottom, every cell is made smaller in proportion to the height the matrices take, until it fits.
function fit(pic) {
  pic.maxCell = Infinity;
  pic.slack = 0;
  fitPass(pic);
  const screen = pic.el.closest(".mha-fullscreen");
  if (!screen || !pic.el.offsetParent) return;
  const overBottom = () => {
    const parts = [pic.footer, pic.stage, pic.caption].filter((e) => e.offsetParent !== null && e.offsetHeight > 0);
    const bottom = Math.max(...parts.map((e) => e.getBoundingClientRect().bottom));
    return bottom - (Math.min(window.innerHeight, screen.getBoundingClientRect().bottom) - 8);
  };
  // heads fitted to the height leave the room their estimate of the labels' height kept spare: given back
  const under = -overBottom();
  if (under > 4 && pic.groups.some((g) => g.spec.fit_height)) {
    pic.slack = under;
    fitPass(pic);
  }
  for (let k = 0; k < 5; k++) {
    const over = overBottom();
    if (over <= 0.5) return;
    // the height the matrices take: the union of their boxes' vertical extents
    const spans = [...pic.stage.querySelectorAll(".mha-box")].map((b) => b.getBoundingClientRect())
      .filter((r) => r.height > 0).map((r) => [r.top, r.bottom]).sort((a, b) => a[0] - b[0]);
    let cells = 0, end = -Infinity;
    for (const [top, bot] of spans) { cells += Math.max(0, bot - Math.max(top, end)); end = Math.max(end, bot); }
    const largest = Math.max(0, ...pic.groups.map((g) => g.cellUsed || 0));
    if (cells <= over || largest <= 4) return;
    pic.maxCell = Math.max(4, largest * (cells - over) / cells - 0.25);
    fitPass(pic);
  }
}

function fitOnce(pic) { // cell side (CSS px) from the width the picture has; numbers as large as their cells allow
  const total = pic.el.clientWidth || 800, text = parseFloat(getComputedStyle(pic.el).fontSize) || 14;
  const screen = pic.el.closest(".mha-fullscreen"), H = window.innerHeight, most = pic.maxCell || Infinity;
  // on the full-window screen, labels at least 2.5 % of the window's height (18 px at 720 p) where their rows allow
  const hall = !!screen && pic.el.classList.contains("mha-lecture-pic");
  const tokSize = (cell) => (hall ? Math.min(text, Math.max(0.025 * H, 0.45 * cell), 0.95 * cell)
    : Math.min(text, Math.max(10, 0.45 * cell)));
  for (const g of pic.groups) {
    const { spec } = g, first = g.panels[0], width = total * (spec.width || 1) - (spec.width ? 26 : 8); // gaps
    const ylab = first ? first.root.querySelector(".mha-ylab").offsetWidth + 14 : 14;
    const sideEl = g.root.querySelector(".mha-side");
    if (sideEl) sideEl.style.display = "";
    let side = spec.cbar === null ? 0 : sideEl.offsetWidth + 10;
    const gaps = 10 * (spec.ncols - 1) + 7 * spec.ncols; // between the panels, and in each panel's body
    let free = (width - side - gaps - ylab * (spec.rows ? 1 : 0)) / spec.ncols;
    // an unlabelled colour bar (the step view's) gives way on a narrow screen: the cells keep rows a label fits in
    if (hall && spec.cbar === "" && !spec.strip && free / spec.m < 0.025 * H / 0.95) {
      sideEl.style.display = "none";
      free += side / spec.ncols;
      side = 0;
    }
    if (spec.strip) { // a wide matrix (n, d_model): rows of a fixed height, as wide as the room
      const row = Math.min(most, Math.max(hall ? 0.025 * H / 0.95 : 0, Math.min(spec.cap || 28, Math.max(6, 240 / spec.n))));
      g.cellUsed = row;
      g.root.style.setProperty("--cell", `${row.toFixed(2)}px`);
      g.root.style.setProperty("--tok", `${tokSize(row).toFixed(2)}px`);
      g.panels.forEach((p) => { p.box.style.width = `${Math.max(40, free).toFixed(0)}px`; });
      continue;
    }
    let cell = Math.max(4, Math.min(spec.cap || 64, most, free / spec.m));
    const rows = Math.ceil(spec.h / spec.ncols), longest = Math.max(0, ...(spec.cols || []).map((t) => [...t].length));
    if (spec.fit_height && screen) { // the full-window screen: the grid takes the height left under it
      const top = g.root.getBoundingClientRect().top - screen.getBoundingClientRect().top;
      const xlab = Math.min(9 * text, longest * 0.62 * text) + 4, titles = rows * (1.4 * text + 10);
      cell = Math.min(cell, (H - top - xlab - titles - text - 12 + (pic.slack || 0)) / (spec.n * rows));
    } else if (spec.fit_height) cell = Math.min(cell, (H * spec.fit_height) / (spec.n * rows));
    if (spec.same) { // panels of one kind (the step view's squares) share the smallest cell among them
      for (const o of pic.groups) {
        if (o !== g && o.spec.same === spec.same) cell = Math.min(cell, o.cellFit || cell);
      }
      g.cellFit = cell;
    }
    const num = Math.min(0.95 * cell / (g.widest || 2.3), 0.6 * cell);
    g.cellUsed = cell;
    g.root.style.setProperty("--cell", `${cell.toFixed(2)}px`);
    g.root.style.setProperty("--num", `${num.toFixed(2)}px`);
    // numbers too small to read are left out (the colours and the colour bar stay): under 7 px, or for the heads
    // of lecture mode and the lecture screen under 3.3 % of the window's height (24 px at 720 p), the size a hall
    // reads from the back row
    g.root.classList.toggle("mha-small-cells", num < (g.lecture && (spec.fit_height || screen) ? 0.033 * H : 7));
    // a key label wider than its cell is turned upright
    const tok = tokSize(cell);
    g.root.style.setProperty("--tok", `${tok.toFixed(2)}px`);
    g.root.classList.toggle("mha-turned", longest * 0.62 * tok > 0.95 * cell);
  }
}

function render({ model, el }) {
  // frames are numbered "view.frame", the view a random name: two pictures on one page never share a number
  // (anywidget may load this module once per widget: a counter here would not be shared)
  const view = Math.random().toString(36).slice(2, 10);
  const pic = { el, groups: [], byKey: {} };
  el.classList.add("mha-pic");
  const caption = make("div", "mha-caption");
  const stage = make("div", "mha-stage-pic");
  const footer = make("div", "mha-footer");
  el.append(caption, stage, footer);
  Object.assign(pic, { caption, stage, footer });
  let frame = 0, queued = false;

  function build() {
    const scheme = model.get("scheme") || {};
    const luts = Object.fromEntries(Object.entries(scheme.cmaps || {}).map(([k, v]) => [k, v.map(rgb)]));
    stage.replaceChildren();
    pic.groups = (scheme.panels || []).map((spec) => buildGrid(spec, luts));
    pic.groups.forEach((g) => { g.lecture = !!scheme.lecture; });
    pic.byKey = Object.fromEntries(pic.groups.map((g) => [g.spec.key, g]));
    pic.groups.forEach((g) => stage.appendChild(g.root));
    el.classList.toggle("mha-lecture-pic", !!scheme.lecture);
    stage.style.gridTemplateColumns = scheme.columns ? `repeat(${scheme.columns}, max-content)` : "";
  }

  function update() {
    queued = false;
    const texts = model.get("texts") || {}, arrays = model.get("arrays") || {};
    caption.textContent = texts.caption || "";
    footer.textContent = texts.footer || "";
    const hidden = new Set(texts.hidden || []);
    for (const g of pic.groups) {
      const key = g.spec.key, titles = (texts.titles || {})[key], note = (texts.notes || {})[key];
      if (arrays[key]) drawGrid(g, arrays[key]);
      if (titles) g.panels.forEach((p, i) => { p.title.textContent = titles[i] || ""; p.title.title = titles[i] || ""; });
      g.panels.forEach((p) => { p.note.textContent = note || ""; });
      g.title.textContent = (texts.group_titles || {})[key] || "";
      g.root.style.visibility = hidden.has(key) ? "hidden" : "";
      g.root.classList.toggle("mha-highlight", texts.highlight === key);
    }
    fit(pic);
    el.dataset.frame = `${view}.${++frame}`;
    el.dispatchEvent(new CustomEvent("mha-drawn", { bubbles: true, detail: { frame } }));
  }

  const later = () => { if (!queued) { queued = true; queueMicrotask(update); } }; // texts and arrays: one redraw
  const rebuild = () => { build(); later(); };
  model.on("change:scheme", rebuild);
  model.on("change:texts", later);
  model.on("change:arrays", later);
  const refit = () => fit(pic);
  const resize = new ResizeObserver(refit);
  resize.observe(el);
  window.addEventListener("resize", refit); // also sent by the lecture screen when high contrast changes the labels
  build();
  update();
  return () => {
    resize.disconnect();
    window.removeEventListener("resize", refit);
    model.off("change:scheme", rebuild);
    model.off("change:texts", later);
    model.off("change:arrays", later);
  };
}

export default { render };
