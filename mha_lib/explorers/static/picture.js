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

const GREY = "#c8c8c8"; // a masked cell

function colour(lut, frac) { return lut[Math.max(0, Math.min(lut.length - 1, Math.round(frac * (lut.length - 1))))]; }

function label(text, cls) { // a token or title as typed, right-to-left text kept in its own direction
  const s = make("span", cls);
  s.dir = "auto";
  setText(s, text);
  return s;
}

function setText(e, text) { // text and tooltip, written only when they differ (no needless style work)
  if (e.textContent !== text) e.textContent = text;
  if (e.title !== text) e.title = text;
}

// a formula of the kernel's ("Qᵢ = X Wᵢ^Q"): "^" and one capital letter drawn as a superscript (Wᵢ with Q raised),
// the rest as text; the tooltip keeps the plain text
function setFormula(e, text) {
  if (e.__formula === text) return;
  e.__formula = text;
  e.title = text;
  e.textContent = "";
  text.split(/\^([A-Z])/).forEach((part, k) => { if (part) e.appendChild(k % 2 ? make("sup", null, part) : document.createTextNode(part)); });
}

function setVar(e, name, value) { if (e.style.getPropertyValue(name) !== value) e.style.setProperty(name, value); }

function setLabels(box, texts, cls) { // the spans of `box` made to hold `texts`: kept, added or removed
  while (box.children.length > texts.length) box.lastChild.remove();
  while (box.children.length < texts.length) box.appendChild(label("", cls));
  texts.forEach((t, k) => setText(box.children[k], t));
}

function setCount(box, count, cls) { // `count` children of class `cls` in `box`, the ones there kept
  while (box.children.length > count) box.lastChild.remove();
  if (box.children.length < count) {
    const more = document.createDocumentFragment();
    for (let k = box.children.length; k < count; k++) more.appendChild(make("div", cls));
    box.appendChild(more);
  }
}

// A cell element each (n x m, for the numbers and the masked hatch) when `wanted`, else none: a panel without
// numbers or masked cells is its box alone (thousands of elements fewer to lay out on a page of explorers)
function setCells(p, wanted) {
  if (!wanted) {
    if (p.cells) { p.cells.remove(); p.cells = null; p.shown = []; }
    return;
  }
  const { n, m } = p;
  if (!p.cells) { p.cells = make("div", "mha-cells"); p.box.appendChild(p.cells); }
  const columns = `repeat(${m}, 1fr)`;
  if (p.cells.style.gridTemplateColumns !== columns) p.cells.style.gridTemplateColumns = columns;
  setCount(p.cells, n * m, "mha-cell");
}

function makePanel() {
  const p = { root: make("div", "mha-panel"), title: label("", "mha-title"), note: make("div", "mha-note") };
  const body = make("div", "mha-body");
  p.axisY = make("span");
  p.ylab = make("div", "mha-ylab");
  p.box = make("div", "mha-box");
  p.xlab = make("div", "mha-xlab");
  body.append(p.axisY, p.ylab, p.box, make("span"), make("span"), p.xlab);
  p.root.append(p.title, p.note, body);
  return p;
}

// A panel made to show head i of `spec`: its labels, the size of its box and cells. What did not change is
// left as it is: a new layout (h, n, d_model, ...) touches only the elements that differ.
function syncPanel(p, spec, i) {
  const { h, n, m } = spec, first = i % spec.ncols === 0, bottom = i + spec.ncols >= h;
  Object.assign(p, { n, m });
  setFormula(p.title, spec.titles[i] || "");
  const yName = first && spec.row_label ? spec.row_label : null;
  if ((yName !== null) !== (p.axisY.className === "mha-axis-y")) p.axisY.className = yName !== null ? "mha-axis-y" : "";
  if (yName !== null) { p.axisY.dir = "auto"; setText(p.axisY, yName); } else if (p.axisY.textContent) p.axisY.textContent = "";
  setLabels(p.ylab, first && spec.rows ? spec.rows : [], "mha-tok");
  setLabels(p.xlab, bottom && spec.cols ? spec.cols : [], "mha-tok");
  const width = `calc(var(--cellw, var(--cell)) * ${m})`, height = `calc(var(--cell) * ${n})`;
  // the colours: one gradient of hard stops per row (drawGrid), the last row first: each row reaches 1 px into the next
  // one, which is drawn over it, so no hairline shows between rows whatever the cells' fractional size
  const at = Array.from({ length: n }, (_, r) => `0 calc(var(--cell) * ${n - 1 - r})`).join(",");
  if (p.box.style.backgroundPosition !== at) Object.assign(p.box.style, { backgroundPosition: at, backgroundSize: "100% calc(var(--cell) + 1px)" });
  if (p.box.style.width !== width && !spec.strip) p.box.style.width = width;
  // a title as wide as its box at least (12 cells at least): "L2 head 1: [CLS] 0.78" whole over 16 small cells
  const titleWidth = spec.strip ? "none" : `max(calc(var(--cell) * 12), ${width})`;
  if (p.title.style.maxWidth !== titleWidth) p.title.style.maxWidth = titleWidth;
  if (p.box.style.height !== height) p.box.style.height = height;
  p.shown = []; // what each cell shows ([text, class]), so a redraw writes only the cells that change
  p.cellsFit = n * m <= 1024; // cell elements (numbers, the masked hatch) are made when the numbers need them
  if (!p.cellsFit) setCells(p, false);
  const xName = bottom && spec.col_label ? spec.col_label : null;
  if (xName !== null) {
    if (!p.axisX) { p.axisX = label("", "mha-axis-x"); p.root.appendChild(p.axisX); }
    setText(p.axisX, xName);
  } else if (p.axisX) { p.axisX.remove(); p.axisX = null; }
}

// One group of heatmaps sharing a scale: h panels of (n, m) matrices in `ncols` columns, a colour bar, a key.
// `g`: the group of the same key shown before (its elements are kept), or undefined (a new one).
function syncGrid(g, spec, luts) {
  if (!g) {
    g = { panels: [], root: make("div", "mha-group"), title: make("div", "mha-group-title") };
    g.heads = make("div", "mha-heads");
    g.side = make("div", "mha-side");
    g.key = make("div", "mha-key");
    g.key.append(make("span", "mha-swatch"), label(""));
    const row = make("div", "mha-grid-row");
    row.append(g.heads, g.side);
    g.root.append(g.title, row);
  }
  const old = g.spec || {};
  g.spec = spec;
  g.lut = luts[spec.cmap];
  g.drawn = null; // drawn again whatever the numbers
  g.root.dataset.key = spec.key;
  const columns = `repeat(${spec.ncols}, max-content)`;
  if (g.heads.style.gridTemplateColumns !== columns) g.heads.style.gridTemplateColumns = columns;
  while (g.panels.length > spec.h) g.panels.pop().root.remove();
  while (g.panels.length < spec.h) { const p = makePanel(); g.panels.push(p); g.heads.appendChild(p.root); }
  g.panels.forEach((p, i) => syncPanel(p, spec, i));
  if (spec.cbar !== null) {
    const made = !g.cbar;
    if (made) {
      g.cbar = make("div", "mha-cbar");
      g.ticks = [0, 1, 2].map(() => make("span", "mha-tick"));
      const ticks = make("div", "mha-ticks");
      ticks.append(...g.ticks);
      g.cbarLabel = label("", "mha-cbar-label");
      g.cbarWrap = make("div", "mha-cbar-wrap");
      g.cbarWrap.append(g.cbar, ticks, g.cbarLabel);
      g.side.prepend(g.cbarWrap);
    }
    // a bar made again (after a layout without it) is painted afresh, whatever the stops before
    if (made || String(old.stops) !== String(spec.stops)) g.cbar.style.background = `linear-gradient(to top, ${spec.stops.join(", ")})`;
    setText(g.cbarLabel, spec.cbar || "");
  } else if (g.cbar) { g.cbarWrap.remove(); g.cbar = g.ticks = g.cbarWrap = null; }
  if (!g.key.parentNode) g.side.appendChild(g.key);
  setText(g.key.lastChild, spec.mask_label || "masked");
  g.root.style.gridArea = spec.area || "";
  g.root.classList.toggle("mha-strip", !!spec.strip);
  return g;
}

function fmtNumber(v, digits) { const s = v.toFixed(digits); return s === "-0." + "0".repeat(digits) ? s.slice(1) : s; }

// lecture mode: a weight in [0, 1] without its leading zero (".25"), 0 and 1 as "0" and "1": three characters at
// most, so the numbers are large enough to read from the back of a hall (3.3 % of the window's height)
const ems = (t) => [...t].reduce((w, c) => w + (c >= "0" && c <= "9" ? 0.64 : 0.36), 0); // DejaVu Sans: width in em
const measurer = document.createElement("canvas").getContext("2d");
function widest(texts, font) { // CSS px of the widest of `texts` in `font`
  measurer.font = font;
  return Math.max(0, ...texts.map((t) => measurer.measureText(t).width));
}
const short01 = (s) => (/^1\.0+$/.test(s) ? "1" : /^0\.0+$/.test(s) ? "0" : s.replace(/^0\./, "."));

const EDGES = {};
function edges(m) { // ",#rrggbb" + edges[c]: cell c of m as a hard-stop gradient's colour stop
  return EDGES[m] || (EDGES[m] = Array.from({ length: m }, (_, c) => ` ${(c * 100 / m).toFixed(3)}% ${((c + 1) * 100 / m).toFixed(3)}%`));
}

function drawGrid(g, entry) {
  const { spec, lut } = g, { n, m } = spec;
  const values = floats(entry), lo = entry.lo, hi = entry.hi, span = hi > lo ? hi - lo : 1;
  let masked = false, widest = 0.64;
  let anyNaN = false; // without numbers, cells only for the masked hatch
  if (!spec.numbers) for (let k = 0; k < values.length && !anyNaN; k++) anyNaN = Number.isNaN(values[k]);
  g.panels.forEach((p, i) => {
    setCells(p, p.cellsFit && (spec.numbers || anyNaN));
    const rowsCss = [], at = edges(m);
    let stops = "";
    for (let k = 0; k < n * m; k++) {
      const v = values[i * n * m + k], frac = (v - lo) / span, nan = Number.isNaN(v);
      const c = nan ? GREY : colour(lut, frac);
      const col = k % m;
      stops += "," + c + at[col];
      if (col === m - 1) { rowsCss.push(`linear-gradient(to right${stops})`); stops = ""; }
      if (!p.cells) continue;
      let text = "", cls = "mha-cell mha-masked";
      if (nan) masked = true;
      else {
        const plain = spec.numbers ? fmtNumber(v, spec.digits) : "";
        text = g.lecture && !spec.signed ? short01(plain) : plain;
        widest = Math.max(widest, ems(text));
        cls = (spec.signed ? Math.abs(frac - 0.5) > 0.3 : frac < 0.6) ? "mha-cell mha-white" : "mha-cell";
      }
      const was = p.shown[k];
      if (was && was[0] === text && was[1] === cls) continue; // the cell shows this already
      const cell = p.cells.children[k];
      if (!was || was[0] !== text) cell.textContent = text;
      if (!was || was[1] !== cls) cell.className = cls;
      p.shown[k] = [text, cls];
    }
    p.box.style.backgroundImage = rowsCss.reverse().join(",");
  });
  g.widest = widest;
  const keyShown = masked ? "" : "none";
  if (g.key.style.display !== keyShown) g.key.style.display = keyShown;
  // lecture: signed ticks with as few decimals as their size needs ("-146", "-1.3", "-0.25"), short enough to read
  const top = Math.max(Math.abs(lo), Math.abs(hi)), places = top >= 10 ? 0 : top >= 1 ? 1 : 2;
  const tick = (v) => (!g.lecture ? fmtNumber(v, 2) : spec.signed ? fmtNumber(v, places) : short01(fmtNumber(v, 2)));
  if (g.ticks) [hi, (lo + hi) / 2, lo].forEach((v, k) => { const t = tick(v); if (g.ticks[k].textContent !== t) g.ticks[k].textContent = t; });
}

function fitPass(pic) {
  for (const g of pic.groups) g.cellFit = undefined;
  fitOnce(pic);
  if (pic.groups.some((g) => g.spec.same)) fitOnce(pic);
}

// On the full-window screen nothing scrolls: when the picture (its caption and footer too) reaches past the
// window's bottom, the cells are made smaller in proportion to the height their matrices take, until it fits.
// `shown`: a picture fitted while hidden, shown at the width it was fitted for: its cells' first estimate (from the
// width) stands, and the page has just been laid out with it, so the overflow is read with no layout from the script
function fit(pic, shown = false) {
  if (!shown) {
    pic.maxCell = Infinity;
    pic.slack = 0;
    fitPass(pic);
  }
  const screen = pic.el.closest(".mha-fullscreen");
  pic.unfitted = !!screen && !pic.el.offsetParent; // hidden on the screen: fitted to its height once shown
  if (!screen || pic.unfitted) return;
  pic.around = [...pic.heights.values()].join(); // the text around the cells, as this fit finds it
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
  // the largest cells are made smaller first, in proportion to the height their matrices take; when that is not
  // enough, down to the next size, and those with them (two or three passes, each one layout of the page)
  for (let k = 0; k < 6; k++) {
    const over = overBottom();
    if (over <= 0.5) return;
    const size = (g) => g.cellUsed || 0, largest = Math.max(0, ...pic.groups.map(size));
    if (largest <= 4) return;
    const biggest = pic.groups.filter((g) => size(g) >= largest - 0.5);
    const next = Math.max(4, ...pic.groups.filter((g) => size(g) < largest - 0.5).map(size));
    // the height the largest cells take: the union of their boxes' vertical extents
    const spans = biggest.flatMap((g) => [...g.root.querySelectorAll(".mha-box")]).map((b) => b.getBoundingClientRect())
      .filter((r) => r.height > 0).map((r) => [r.top, r.bottom]).sort((a, b) => a[0] - b[0]);
    let cells = 0, end = -Infinity;
    for (const [top, bot] of spans) { cells += Math.max(0, bot - Math.max(top, end)); end = Math.max(end, bot); }
    pic.maxCell = Math.max(next, cells > over ? largest * (cells - over) / cells - 0.25 : 0);
    fitPass(pic);
  }
}

function fitOnce(pic) { // cell side (CSS px) from the width the picture has; numbers as large as their cells allow
  const screen = pic.el.closest(".mha-fullscreen"), H = window.innerHeight, most = pic.maxCell || Infinity;
  // the picture's font, read once per layout of the page (a resize, high contrast, lecture mode): reading it at every
  // move would work out the page's styles inside the script, and again for the frame
  if (!pic.font || !pic.font[2]) { const cs = getComputedStyle(pic.el); pic.font = [parseFloat(cs.fontSize) || 14, cs.fontWeight, cs.fontFamily]; }
  // in a notebook, the width its ResizeObserver last reported (reading clientWidth would lay the page out first);
  // on the screen, the width now, or while hidden the last one reported (the width it will be shown at)
  const [text, weight, family] = pic.font, total = (!screen && pic.width) || pic.el.clientWidth || pic.width || 800;
  // on the full-window screen, labels at least 2.5 % of the window's height (18 px at 720 p) where their rows allow
  const hall = !!screen && pic.el.classList.contains("mha-lecture-pic");
  const tokSize = (cell) => (hall ? Math.min(text, Math.max(0.025 * H, 0.45 * cell), 0.95 * cell)
    : Math.min(text, Math.max(10, 0.45 * cell)));
  // the labels' and the colour bar's widths from their texts (measureText: no layout of the page, a new layout
  // of the picture costs one pass)
  const font = (px) => `${weight} ${px}px ${family}`;
  const small = 0.85 * text;
  pic.groups.forEach((g) => { if (g.side.style.display) g.side.style.display = ""; });
  // the bar, its ticks, its label upright in as many columns as the bar's height needs (picture.css: 4 cells high,
  // 120 px at least, 60 % of the window at most)
  const sideFor = (g, cell) => {
    if (g.spec.cbar === null) return 0;
    const lines = Math.ceil(widest([g.spec.cbar], font(small)) / Math.min(0.6 * H, Math.max(120, 4 * cell)));
    const bar = 14 + 4 + Math.ceil(widest(g.ticks.map((t) => t.textContent), font(small))) + 4 + 1.25 * small * lines;
    const key = g.key.style.display === "none" ? 0 : Math.max(1.2 * small, widest([g.spec.mask_label || "masked"], font(small)));
    return Math.ceil(Math.max(bar, key)) + 10;
  };
  pic.groups.forEach((g) => {
    const { spec } = g, width = total * (spec.width || 1) - (spec.width ? 26 : 8); // gaps
    const sideEl = g.side;
    // a first estimate, from the cells now on the page (found with the cells below)
    let side = sideFor(g, parseFloat(g.root.style.getPropertyValue("--cell")) || 40);
    // between the panels, and in each panel's body: two column gaps of 3 px and the labels' padding of 3 px; the
    // room of a panel's cells once its row labels, in labels of `tok` px, have theirs, and the axis name ("query")
    // beside them, upright: one line of the picture's text. A grid without an axis name keeps 17 px spare beside
    // its labels (the step view's titles and shapes are wider than its matrices).
    const named = !!spec.row_label, axis = named ? Math.ceil(1.25 * text) : 17;
    const gaps = 10 * (spec.ncols - 1) + (named ? 9 : 7) * spec.ncols;
    const ylab = (tok) => (g.panels[0] && spec.rows ? Math.ceil(widest(spec.rows, font(tok))) : 0) + axis;
    const room = (tok) => (width - side - gaps - ylab(tok) * (spec.rows ? 1 : 0)) / spec.ncols;
    // the labels' size now on the page: a first estimate (the cells' size, and so the labels', is found below)
    let tok = parseFloat(g.root.style.getPropertyValue("--tok")) || tokSize(parseFloat(g.root.style.getPropertyValue("--cell")) || 40);
    let free = room(tok);
    // an unlabelled colour bar (the step view's) gives way on a narrow screen: the cells keep rows a label fits in
    if (hall && spec.cbar === "" && !spec.strip && free / spec.m < 0.025 * H / 0.95) {
      sideEl.style.display = "none";
      side = 0;
      free = room(tok);
    }
    if (spec.strip) { // a wide matrix (n, d_model): rows of a fixed height, as wide as the room
      const row = Math.min(most, Math.max(hall ? 0.025 * H / 0.95 : 0, Math.min(spec.cap || 28, Math.max(6, 240 / spec.n))));
      g.cellUsed = row;
      setVar(g.root, "--cell", `${row.toFixed(2)}px`);
      g.root.style.removeProperty("--cellw");
      setVar(g.root, "--tok", `${tokSize(row).toFixed(2)}px`);
      let wide = Math.max(40, room(tokSize(row)));
      if (spec.same) { // strips of one shape (Q_i, K_i, V_i) are drawn as wide as the narrowest of them has room for
        for (const o of pic.groups) { if (o !== g && o.spec.same === spec.same) wide = Math.min(wide, o.cellFit || wide); }
        g.cellFit = wide;
      }
      const boxWidth = `${wide.toFixed(0)}px`;
      g.panels.forEach((p) => { if (p.box.style.width !== boxWidth) p.box.style.width = boxWidth; });
      return;
    }
    const rows = Math.ceil(spec.h / spec.ncols), longest = Math.max(0, ...(spec.cols || []).map((t) => [...t].length));
    if (spec.fit_height && screen && pic.el.offsetParent) { // where the grid starts on the screen; hidden, where it
      // started when last shown (the caption above may differ: the fit on showing it corrects the cells)
      g.top = g.root.getBoundingClientRect().top - screen.getBoundingClientRect().top;
    }
    const cellFor = (free) => { // [as wide as the room allows, the cell's side]
      const wide = Math.max(4, Math.min(spec.cap || 64, most, free / spec.m));
      let cell = wide;
      if (spec.fit_height && screen) { // the full-window screen: the grid takes the height left under it
        const xlab = Math.min(9 * text, longest * 0.62 * text) + 4, titles = rows * (1.4 * text + 10);
        cell = Math.min(cell, (H - (g.top || 0) - xlab - titles - text - 12 + (pic.slack || 0)) / (spec.n * rows));
      } else if (spec.fit_height) cell = Math.min(cell, (H * spec.fit_height) / (spec.n * rows));
      if (spec.same) { // panels of one kind (the step view's squares) share the smallest cell among them
        for (const o of pic.groups) {
          if (o !== g && o.spec.same === spec.same) cell = Math.min(cell, o.cellFit || cell);
        }
        g.cellFit = cell;
      }
      return [wide, cell];
    };
    let [wide, cell] = cellFor(free);
    // the row labels and the colour bar are sized by the cells, and take width from them: found together, whatever
    // the sizes the picture had before (a few rounds of arithmetic; the page is not laid out)
    for (let k = 0; k < 4; k++) {
      const next = spec.rows ? tokSize(cell) : tok, nextSide = side && Math.max(side, sideFor(g, cell)); // no to and fro
      if (Math.abs(next - tok) < 0.25 && nextSide === side) break;
      [tok, side] = [next, nextSide];
      [wide, cell] = cellFor(room(tok));
    }
    // on the full-window screen, heads fitted to its height take its width too: cells up to 1.5 times as wide as high
    const cellW = hall && spec.fit_height && !spec.same ? Math.min(wide, 1.5 * cell) : cell;
    // the widest number takes 0.9 of its cell at most: a gap between neighbours (".92 .08", not ".92.08"); in
    // lecture mode 0.94, its cells parted by a white line (scene 2's weights at 1024 x 768 need it)
    const num = Math.min((g.lecture ? 0.94 : 0.9) * cellW / (g.widest || 2.3), 0.6 * cell);
    g.cellUsed = cell;
    setVar(g.root, "--cell", `${cell.toFixed(2)}px`);
    setVar(g.root, "--cellw", `${cellW.toFixed(2)}px`);
    setVar(g.root, "--num", `${num.toFixed(2)}px`);
    // numbers too small to read are left out (the colours and the colour bar stay): under 7 px, or for the heads
    // of lecture mode and the lecture screen under 3.3 % of the window's height (24 px at 720 p), the size a hall
    // reads from the back row
    g.root.classList.toggle("mha-small-cells", num < (g.lecture && (spec.fit_height || screen) ? 0.033 * H : 7));
    // a key label wider than its cell, or nearly (neighbours would touch: "humptydumpty"), is turned upright
    tok = tokSize(cell);
    setVar(g.root, "--tok", `${tok.toFixed(2)}px`);
    g.root.classList.toggle("mha-turned", longest * 0.62 * tok > 0.85 * cellW);
  });
}

function render({ model, el }) {
  // frames are numbered "view.frame", the view a random name: two pictures on one page never share a number
  // (anywidget may load this module once per widget: a counter here would not be shared)
  const view = Math.random().toString(36).slice(2, 10);
  const pic = { el, groups: [], byKey: {}, heights: new Map() };
  el.classList.add("mha-pic");
  const caption = make("div", "mha-caption");
  const stage = make("div", "mha-stage-pic");
  const footer = make("div", "mha-footer");
  el.append(caption, stage, footer);
  Object.assign(pic, { caption, stage, footer });
  let frame = 0, queued = false;

  function build() { // the groups of the new scheme: those of a key shown before keep their elements
    const scheme = model.get("scheme") || {}, luts = scheme.cmaps || {}; // colour maps: lists of "#rrggbb"
    const before = pic.byKey;
    pic.groups = (scheme.panels || []).map((spec) => syncGrid(before[spec.key], spec, luts));
    pic.groups.forEach((g) => { g.lecture = !!scheme.lecture; });
    pic.byKey = Object.fromEntries(pic.groups.map((g) => [g.spec.key, g]));
    Object.values(before).forEach((g) => { if (pic.byKey[g.spec.key] !== g) g.root.remove(); });
    pic.groups.forEach((g, k) => { if (stage.children[k] !== g.root) stage.insertBefore(g.root, stage.children[k] || null); });
    if (el.classList.contains("mha-lecture-pic") !== !!scheme.lecture) pic.font = null; // larger text
    el.classList.toggle("mha-lecture-pic", !!scheme.lecture);
    pic.built = true;
    const columns = scheme.columns ? `repeat(${scheme.columns}, max-content)` : "";
    if (stage.style.gridTemplateColumns !== columns) stage.style.gridTemplateColumns = columns;
  }

  function update() { // texts set in place; a group's numbers drawn when they changed (or its layout did)
    queued = false;
    const texts = model.get("texts") || {}, arrays = model.get("arrays") || {};
    [[caption, texts.caption], [footer, texts.footer]].forEach(([e, t]) => setFormula(e, t || ""));
    const hidden = new Set(texts.hidden || []);
    for (const g of pic.groups) {
      const key = g.spec.key, titles = (texts.titles || {})[key], note = (texts.notes || {})[key] || "";
      if (arrays[key] && arrays[key] !== g.drawn) { drawGrid(g, arrays[key]); g.drawn = arrays[key]; }
      if (titles) g.panels.forEach((p, i) => setFormula(p.title, titles[i] || ""));
      g.panels.forEach((p) => { if (p.note.textContent !== note) p.note.textContent = note; });
      const title = (texts.group_titles || {})[key] || "";
      if (g.title.textContent !== title) g.title.textContent = title;
      const visibility = hidden.has(key) ? "hidden" : "";
      if (g.root.style.visibility !== visibility) g.root.style.visibility = visibility;
      g.root.classList.toggle("mha-highlight", texts.highlight === key);
    }
    // the cells are sized again when what sizes them changed: a move that changes only numbers, colours or which
    // panels show (a step of the step view) costs no layout here; on the full-window screen the text around the
    // cells sizes them too, and `watch` fits them again when it changes height
    const sizes = JSON.stringify([texts.titles, texts.notes, texts.group_titles, pic.groups.map((g) => g.widest),
      window.innerWidth, window.innerHeight]);
    if (sizes !== pic.sized || pic.built) fit(pic);
    const screen = !pic.watched && el.closest(".mha-screen");
    if (screen) { pic.watched = true; screen.querySelectorAll(".mha-bar, .mha-scene-text").forEach((t) => watch.observe(t)); }
    pic.sized = sizes;
    pic.built = false;
    el.dataset.frame = `${view}.${++frame}`;
    el.dispatchEvent(new CustomEvent("mha-drawn", { bubbles: true, detail: { frame } }));
  }

  const later = () => { if (!queued) { queued = true; queueMicrotask(update); } }; // texts and arrays: one redraw
  const rebuild = () => { build(); later(); };
  model.on("change:scheme", rebuild);
  model.on("change:texts", later);
  model.on("change:arrays", later);
  const refit = () => { pic.font = null; fit(pic); };
  // The cells follow the picture's width (its height is what they make it); on the full-window screen, also the
  // height of the text around them (the caption, the footer, the scene bar and line), which takes height from them.
  // A picture hidden (its scene's stage is display: none: every size 0) keeps its cells; shown again, it is fitted
  // only if what sizes them changed meanwhile (a return to a scene costs no layout from the script).
  let width = -1;
  const watch = new ResizeObserver((entries) => {
    let wider = false;
    for (const { target, contentRect: r } of entries) {
      if (target !== el) { if (r.height > 0) pic.heights.set(target, r.height); }
      else if (r.width > 0 && r.width !== width) { wider = true; width = pic.width = r.width; }
    }
    const moved = () => pic.unfitted || pic.around !== [...pic.heights.values()].join();
    if (wider) refit();
    else if (el.closest(".mha-fullscreen") && el.offsetParent && moved()) {
      // heads fitted to the height estimate their cells from where they are on the screen: known once shown
      fit(pic, pic.unfitted && pic.maxCell === Infinity && pic.groups.every((g) => !g.spec.fit_height || g.top));
    }
  });
  [el, caption, footer].forEach((e) => watch.observe(e));
  window.addEventListener("resize", refit); // also sent by the lecture screen when high contrast changes the labels
  build();
  update();
  return () => {
    watch.disconnect();
    window.removeEventListener("resize", refit);
    model.off("change:scheme", rebuild);
    model.off("change:texts", later);
    model.off("change:arrays", later);
  };
}

export default { render };
