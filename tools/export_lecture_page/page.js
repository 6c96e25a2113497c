// The lecture screen from recorded numbers (written by tools/export_lecture.py): no kernel, no server, no network.
// The pictures are drawn by the explorers' own component, picture.js (an anywidget module, inlined in index.html as
// text), given a stand-in for its widget model that holds the recorded traits of the setting on screen.
// lecture_data.js: scenes (each a still HTML picture, or live controls, fixed controls and one frame per setting of
// the live controls: a number per trait, or the message that replaces the picture), values (the traits' values,
// each kept once) and buffers (the matrices: float32, base64).
(function () {
  "use strict";
  const DATA = window.MHA_LECTURE;
  const $ = (selector) => document.querySelector(selector);
  const make = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };
  const screen = $("#screen"), menu = $(".mha-scene-menu"), counter = $(".mha-scene-counter");
  const prev = $(".mha-scene-prev"), next = $(".mha-scene-next"), notice = $(".mha-notice");
  const sceneText = $(".mha-scene-text"), column = $(".mha-controls"), message = $(".mha-message");
  const pictureView = $('[data-view="picture"]'), stillView = $('[data-view="still"]');
  const mapButton = $(".mha-map"), mapImage = $(".mha-map-image"), presenter = $(".mha-presenter-toggle");
  const contrast = $(".mha-contrast-box");

  if (!DATA || !window.MHA_MODULES) {
    message.textContent = "lecture_data.js is missing or damaged: copy the whole folder made by tools/export_lecture.py.";
    return;
  }

  // ---- recorded values: buffers decoded once, each value built once (the same value is the same object, so the
  // component is told only what changed, as the kernel tells it)
  const buffers = new Map(), values = new Map();
  function buffer(i) {
    if (!buffers.has(i)) {
      const text = atob(DATA.buffers[i]), bytes = new Uint8Array(text.length);
      for (let k = 0; k < text.length; k++) bytes[k] = text.charCodeAt(k);
      buffers.set(i, new DataView(bytes.buffer));
    }
    return buffers.get(i);
  }
  function revive(x) {
    if (Array.isArray(x)) return x.map(revive);
    if (x && typeof x === "object") {
      const keys = Object.keys(x);
      if (keys.length === 1 && keys[0] === "$buf") return buffer(x.$buf);
      return Object.fromEntries(keys.map((k) => [k, revive(x[k])]));
    }
    return x;
  }
  function value(i) {
    if (!values.has(i)) values.set(i, revive(DATA.values[i]));
    return values.get(i);
  }

  // ---- the stand-in for anywidget's model: get/set/on/off/save_changes/send, fed by put()
  function recordedModel() {
    const state = {}, handlers = {};
    return {
      get: (name) => state[name],
      set: (name, v) => { state[name] = v; },
      save_changes() {},
      send() {},
      on(event, callback) { (handlers[event] = handlers[event] || []).push(callback); },
      off(event, callback) {
        if (!event) { Object.keys(handlers).forEach((k) => delete handlers[k]); return; }
        handlers[event] = (handlers[event] || []).filter((f) => callback && f !== callback);
      },
      put(updates) { // the traits of a new setting: a change event for each one that changed
        const changed = Object.keys(updates).filter((k) => state[k] !== updates[k]);
        changed.forEach((k) => { state[k] = updates[k]; });
        changed.forEach((k) => (handlers["change:" + k] || []).slice().forEach((f) => f(this, state[k])));
        if (changed.length) (handlers.change || []).slice().forEach((f) => f(this));
      },
    };
  }

  const model = recordedModel();
  let component = null, rendered = false;
  const scenes = DATA.scenes;
  const now = { k: 0, positions: [] };

  // ---- a scene: its controls column, its frame
  function frameIndex(scene, positions) { // itertools.product order: the last control varies fastest
    return scene.controls.reduce((index, c, i) => index * c.labels.length + positions[i], 0);
  }

  function liveControl(scene, c, i) {
    const row = make("div", "mha-control mha-live");
    row.dataset.control = c.name;
    const set = (p) => { now.positions[i] = p; draw(); };
    if (c.kind === "checkbox" && c.values.length === 2 && c.values.every((v) => typeof v === "boolean")) {
      const label = make("label", "mha-check");
      const box = make("input");
      box.type = "checkbox";
      box.checked = c.values[now.positions[i]] === true;
      box.addEventListener("change", () => set(c.values.indexOf(box.checked)));
      label.append(box, make("span", null, c.label));
      row.appendChild(label);
      return row;
    }
    const name = make("label", "mha-control-label", c.label);
    row.appendChild(name);
    if (c.kind === "select" || c.kind === "checkbox") {
      const select = make("select");
      c.labels.forEach((text, p) => { const o = make("option", null, text); o.value = String(p); select.appendChild(o); });
      select.value = String(now.positions[i]);
      select.addEventListener("change", () => { set(Number(select.value)); select.blur(); });
      row.appendChild(select);
      return row;
    }
    const line = make("div", "mha-range");
    const slider = make("input");
    slider.type = "range";
    slider.min = "0";
    slider.max = String(c.labels.length - 1);
    slider.step = "1";
    slider.value = String(now.positions[i]);
    slider.setAttribute("aria-label", c.label);
    const readout = make("span", "mha-readout", c.labels[now.positions[i]]);
    slider.addEventListener("input", () => { readout.textContent = c.labels[Number(slider.value)]; set(Number(slider.value)); });
    line.append(slider, readout);
    row.appendChild(line);
    row.sync = () => { slider.value = String(now.positions[i]); readout.textContent = c.labels[now.positions[i]]; };
    return row;
  }

  function buildColumn(scene) {
    column.replaceChildren();
    if (!scene.controls) { screen.classList.add("mha-no-controls"); return; }
    screen.classList.remove("mha-no-controls");
    if (scene.steps) {
      const buttons = make("div", "mha-step-buttons");
      const back = make("button", "mha-step-prev", "◀ previous step"), on = make("button", "mha-step-next", "next step ▶");
      back.type = on.type = "button";
      back.title = "previous step (↑ or ,)";
      on.title = "next step (↓ or .)";
      back.addEventListener("click", () => step(-1));
      on.addEventListener("click", () => step(+1));
      buttons.append(back, on);
      column.appendChild(buttons);
    }
    if (scene.controls.length) {
      column.appendChild(make("div", "mha-column-title", "live here"));
      scene.controls.forEach((c, i) => column.appendChild(liveControl(scene, c, i)));
    }
    if (scene.fixed.length) {
      const fixed = make("div", "mha-fixed");
      fixed.appendChild(make("div", "mha-column-title", "fixed in this copy"));
      scene.fixed.forEach((c) => {
        const row = make("div", "mha-fixed-row");
        row.dataset.control = c.name;
        row.append(make("span", "mha-fixed-label", c.label + ": "), make("span", "mha-fixed-value", c.value));
        fixed.appendChild(row);
      });
      column.appendChild(fixed);
    }
    const live = (name) => scene.controls.some((c) => c.name === name);
    column.appendChild(make("div", "mha-column-note",
      "Keys: → or Page Down next scene, ← or Page Up previous, ↓ ↑ steps, P hides this column, " +
      (live("scaled") ? "S divides by √d_k or not" : "S (√d_k): fixed in this scene") + ", " +
      (live("temperature") ? "T or ] / Shift+T or [ temperature 0.1, 1, 10" : "T (temperature): fixed in this scene") +
      ", " + (live("head") ? "H / Shift+H the next head or the one before" : "H (head): fixed in this scene") +
      ". An offline copy: the controls live here move between recorded settings; the lecture screen itself has " +
      "every control live."));
  }

  function stepControl(scene) { return scene.controls ? scene.controls.findIndex((c) => c.name === "step") : -1; }

  function step(by) {
    const scene = scenes[now.k], i = stepControl(scene);
    if (i < 0 || mapButton.getAttribute("aria-pressed") === "true") return;
    const p = Math.max(0, Math.min(scene.controls[i].labels.length - 1, now.positions[i] + by));
    if (p === now.positions[i]) return;
    now.positions[i] = p;
    const row = column.querySelector('[data-control="step"]');
    if (row && row.sync) row.sync();
    draw();
  }

  function draw() {
    const scene = scenes[now.k];
    if (scene.html !== undefined) {
      message.replaceChildren();
      stillView.innerHTML = scene.html; // made by the kernel from the scene's own text: no student input
      pictureView.hidden = true;
      stillView.hidden = false;
      screen.dataset.drawn = `${now.k + 1}`;
      return;
    }
    stillView.hidden = true;
    stillView.replaceChildren();
    const frame = scene.frames[frameIndex(scene, now.positions)];
    if (frame.line !== undefined) sceneText.textContent = frame.line; // a line that follows a control (h)
    Object.entries(frame.fixed || {}).forEach(([name, text]) => { // a fixed control that follows a live one (d_k)
      const shown = column.querySelector(`.mha-fixed-row[data-control="${name}"] .mha-fixed-value`);
      if (shown) shown.textContent = text;
    });
    if (frame.message !== undefined) {
      message.innerHTML = frame.message; // the explorer's message, escaped by the kernel
      pictureView.hidden = true;
    } else {
      message.replaceChildren();
      const traits = Object.fromEntries(DATA.traits.map((name) => [name, value(frame[name])]));
      pictureView.hidden = false;
      if (!rendered) {
        Object.entries(traits).forEach(([k, v]) => model.set(k, v));
        component.render({ model, el: pictureView });
        rendered = true;
      } else {
        model.put(traits);
      }
    }
    screen.dataset.drawn = `${now.k + 1}:${now.positions.join(",")}`;
  }

  function showMap(on) {
    mapButton.setAttribute("aria-pressed", String(on));
    screen.classList.toggle("mha-map-on", on);
    if (on) {
      const step = scenes[now.k].step || "none";
      const heads = scenes[now.k].heads && scenes[now.k].heads !== 8 ? `_h${scenes[now.k].heads}` : ""; // MiniLM: 12
      mapImage.src = `maps/map_${step}${heads}${contrast.checked ? "_contrast" : ""}.png`;
    }
  }

  function show(k) {
    const scene = scenes[k];
    now.k = k;
    now.positions = scene.controls ? scene.start.slice() : [];
    menu.value = String(k);
    counter.textContent = `${k + 1} / ${scenes.length}`;
    sceneText.textContent = scene.text || "";
    sceneText.hidden = !scene.text;
    prev.disabled = k === 0;
    next.disabled = k === scenes.length - 1;
    screen.dataset.scene = String(k + 1);
    screen.dataset.view = scene.view;
    showMap(false);
    buildColumn(scene);
    draw();
  }

  function go(k) {
    notice.textContent = "";
    show(Math.max(0, Math.min(scenes.length - 1, k)));
  }

  function sceneIndex(text) { // a number from 1, a slug or a name, as mha_lib.lecture.scenes.scene_index
    const t = String(text).trim().toLowerCase();
    if (/^[0-9]{1,6}$/.test(t)) { const n = Number(t); return n >= 1 && n <= scenes.length ? n - 1 : null; }
    const k = scenes.findIndex((s) => s.slug === t || s.name.toLowerCase() === t);
    return k < 0 ? null : k;
  }

  // ---- the bar and the keys
  scenes.forEach((s, k) => {
    const o = make("option", null, `${k + 1}. ${s.name}`);
    o.value = String(k);
    menu.appendChild(o);
  });
  menu.addEventListener("change", () => { go(Number(menu.value)); menu.blur(); });
  prev.addEventListener("click", () => go(now.k - 1));
  next.addEventListener("click", () => go(now.k + 1));
  mapButton.addEventListener("click", () => showMap(mapButton.getAttribute("aria-pressed") !== "true"));
  presenter.addEventListener("click", () => {
    const on = screen.classList.toggle("mha-presenter");
    presenter.setAttribute("aria-pressed", String(on));
    presenter.textContent = on ? "show controls" : "hide controls";
  });
  contrast.addEventListener("change", () => {
    screen.classList.toggle("mha-contrast", contrast.checked);
    if (mapButton.getAttribute("aria-pressed") === "true") showMap(true);
    contrast.blur(); // the keys go back to the scenes
  });
  // The keys are the live screen's own script (screen.js, beside this one): it presses the buttons of the bar and of
  // the step view, and the hidden buttons of the live moves, whose clicks are handled here from the recorded settings.
  function liveMove(name, move) { // a live control of the scene on screen, moved to the position move(control, p)
    const scene = scenes[now.k], i = scene.controls ? scene.controls.findIndex((c) => c.name === name) : -1;
    if (i < 0 || mapButton.getAttribute("aria-pressed") === "true") return; // fixed (or absent) here: nothing moves
    const p = move(scene.controls[i], now.positions[i]);
    if (p === now.positions[i] || p < 0) return;
    now.positions[i] = p;
    buildColumn(scene); // the column shows the new value
    draw();
  }
  const planned = DATA.temperature_steps || [0.1, 1, 10];
  function temperature(up) { // the next planned temperature up (else down), as mha_lib.lecture.screen.next_temperature
    return (c, p) => {
      const t = c.values[p], ahead = planned.filter((v) => (up ? v > t * 1.001 : v < t / 1.001));
      if (!ahead.length) return p;
      const want = up ? Math.min(...ahead) : Math.max(...ahead);
      return c.values.findIndex((v) => Math.abs(v - want) <= 1e-3 * want);
    };
  }
  $(".mha-key-scale").addEventListener("click", () => liveMove("scaled", (c, p) => c.values.indexOf(!c.values[p])));
  $(".mha-key-warmer").addEventListener("click", () => liveMove("temperature", temperature(true)));
  $(".mha-key-cooler").addEventListener("click", () => liveMove("temperature", temperature(false)));
  // H and Shift+H: the next head or the one before, the first and last staying (where the head is live)
  const head = (by) => (c, p) => Math.max(0, Math.min(c.values.length - 1, p + by));
  $(".mha-key-next_head").addEventListener("click", () => liveMove("head", head(+1)));
  $(".mha-key-previous_head").addEventListener("click", () => liveMove("head", head(-1)));

  // ---- start: the component from its text (a module cannot be loaded from file://, a blob can), then the scene
  // asked for in ?scene=
  const source = new Blob([window.MHA_MODULES["picture.js"]], { type: "text/javascript" });
  import(URL.createObjectURL(source)).then((module) => {
    component = module.default;
    const asked = new URLSearchParams(window.location.search).get("scene");
    let start = asked === null ? 0 : sceneIndex(asked);
    if (start === null) {
      notice.textContent = `no scene ${asked.slice(0, 40)}: scene 1 is shown`;
      start = 0;
    }
    // a projector window (4:3, 16:10, 16:9) opens in the presenter layout, as the live screen does
    if (window.innerWidth / window.innerHeight < (DATA.presenter_below || 2.0)) presenter.click();
    show(start);
    screen.dataset.ready = "true";
  }).catch((error) => {
    message.textContent = `The picture component could not be loaded: ${error}`;
  });
})();
