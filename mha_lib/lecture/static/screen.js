// The lecture screen's keys and size report (displayed by notebooks/lecture.ipynb as KEYS_JS; the offline copy of
// tools/export_lecture.py runs it too, on buttons of the same classes).
(function () {
  const $ = (selector) => document.querySelector(selector);
  let timer = null;
  const later = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  function report() {
    const box = $('.mha-viewport input'), screen = $('.mha-screen');
    if (!box || !screen) { setTimeout(report, 300); return; }
    if (!screen.__mhaWatched) {  // its width changes without the window's too (JupyterLab's side panels)
      screen.__mhaWatched = true;
      new ResizeObserver(later).observe(screen);
      // high contrast makes the labels bold, so wider: the pictures fit themselves again (picture.js: on resize)
      let bold = screen.classList.contains('mha-contrast');
      new MutationObserver(() => {
        if (bold === screen.classList.contains('mha-contrast')) { return; }
        bold = !bold;
        window.dispatchEvent(new Event('resize'));
      }).observe(screen, { attributes: true, attributeFilter: ['class'] });
    }
    // the screen's own width: the whole window in Voila, a cell in JupyterLab (a picture drawn for the window
    // there had up to 1.9 times the pixels it was painted with)
    const value = (screen.clientWidth || window.innerWidth) + 'x' + window.innerHeight + '@' + window.devicePixelRatio;
    if (box.value === value) { return; }
    box.value = value;
    ['input', 'change'].forEach((type) => box.dispatchEvent(new Event(type, { bubbles: true })));
  }
  report();
  if (window.__mhaLectureKeys) { return; }
  window.__mhaLectureKeys = true;
  window.addEventListener('resize', later);
  // arrows typed into these stay theirs (not a ticked checkbox: the keys still change scenes after high contrast)
  const fields = 'input:not([type=checkbox]), textarea, select, [contenteditable=true], .noUi-handle, [role=slider]';
  // letters typed into these stay theirs (a slider types no letter: P, S, T, [ and ] work from it)
  const typing = 'input:not([type=checkbox]):not([type=range]), textarea, select, [contenteditable=true]';
  // the live moves: S divides by sqrt(d_k) or not, T or ] the next planned temperature, Shift+T or [ the one before,
  // H the step view's next head, Shift+H the one before (hidden buttons of the scene bar: the kernel knows the
  // scene's controls)
  const live = { s: 'scale', S: 'scale', t: 'warmer', ']': 'warmer', T: 'cooler', '[': 'cooler',
                 h: 'next_head', H: 'previous_head' };
  document.addEventListener('keydown', function (e) {
    // only on the full-window screen (Voila): inside JupyterLab the arrows move between cells
    if (!$('.mha-screen.mha-fullscreen') || e.altKey || e.ctrlKey || e.metaKey) { return; }
    // scenes: the arrows and what presentation clickers send (Page Down / Page Up); steps of the step view: the
    // down and up arrows, or "." and ","
    const letter = e.key === 'p' || e.key === 'P' || e.key in live;
    if (letter && !(e.target && e.target.closest(typing))) {
      // from a focused slider too (after a move with the controls shown): the slider lets the key go
      const button = (e.key === 'p' || e.key === 'P') ? $('.mha-presenter-toggle') : $('button.mha-key-' + live[e.key]);
      if (!button) { return; }
      e.preventDefault();
      e.stopPropagation();
      if (document.activeElement && document.activeElement.closest(fields)) { document.activeElement.blur(); }
      button.click();  // the presenter layout shown or hidden, or the live move asked of the kernel
      return;
    }
    const target = { ArrowRight: 'scene-next', PageDown: 'scene-next', ArrowLeft: 'scene-prev', PageUp: 'scene-prev',
                     ArrowDown: 'step-next', '.': 'step-next', ArrowUp: 'step-prev', ',': 'step-prev' }[e.key];
    // Page Down / Page Up change scenes even from a slider or a text box (a clicker has no other key to take the
    // focus back); the arrows and "." "," typed into a field stay the field's
    const clicker = e.key === 'PageDown' || e.key === 'PageUp';
    if (!target || (!clicker && e.target && e.target.closest(fields))) { return; }
    e.preventDefault();
    if (clicker) {  // not the field's too (a slider moves by a large step on Page Down; a text box stops the key)
      e.stopPropagation();
      if (document.activeElement && document.activeElement.closest(fields)) { document.activeElement.blur(); }
    }
    // the button of the view on screen (the step buttons are hidden with the controls in the presenter layout)
    const button = [...document.querySelectorAll('button.mha-' + target)]
      .find((b) => (b.closest('.mha-stage') || b).offsetParent !== null);
    if (button) { button.click(); return; }
    // a still scene whose answer waits for the poll (scenes 1 and 10): the next step shows it, the previous hides it
    if (target === 'step-next' || target === 'step-prev') { reveal(target === 'step-next'); }
  }, true);  // the capture phase: before a slider or a text box takes the key (ipywidgets' text boxes stop it)
  function reveal(on) {
    const pic = [...document.querySelectorAll('.mha-screen .mha-pic.mha-still')]
      .find((p) => p.offsetParent !== null && p.querySelector('.mha-answer'));
    if (pic) { pic.classList.toggle('mha-revealed', on); }
  }
  document.addEventListener('click', function (e) {
    if (e.target && e.target.closest && e.target.closest('.mha-reveal')) { reveal(true); return; }
    // a scene opened again opens without its answer
    if (e.target && e.target.closest && e.target.closest('button.mha-scene-next, button.mha-scene-prev')) {
      document.querySelectorAll('.mha-pic.mha-revealed').forEach((p) => p.classList.remove('mha-revealed'));
    }
  });
  // One scene change at a time: after a press on previous/next (key or mouse), further presses are ignored until
  // the new scene is on screen (its counter moved; at most 6 s), and for HOLD ms at least: a clicker's double press
  // or bounce (20-120 ms apart) moves one scene, on the live screen and in the offline copy alike. While presses
  // are ignored the screen has the class mha-held; while the kernel draws the scene its counter is greyed.
  const HOLD = 300;
  let pending = null;
  const counterText = () => ($('.mha-scene-counter') || { innerText: '' }).innerText.trim();
  function mark(cls, on) {
    const screen = $('.mha-screen');
    if (screen) { screen.classList.toggle(cls, on); }
  }
  function busy() {
    if (!pending) { return false; }
    const waited = Date.now() - pending.t, moved = counterText() !== pending.counter;
    if (moved) { mark('mha-drawing', false); }
    if (waited > 6000 || (moved && waited >= HOLD)) {
      pending = null;
      mark('mha-drawing', false);
      mark('mha-held', false);
    }
    return pending !== null;
  }
  document.addEventListener('click', function (e) {
    const b = e.target && e.target.closest && e.target.closest('button.mha-scene-next, button.mha-scene-prev');
    if (!b || b.disabled) { return; }
    if (busy()) { e.preventDefault(); e.stopImmediatePropagation(); return; }
    pending = { t: Date.now(), counter: counterText() };
    mark('mha-held', true);
    if (!$('.mha-export')) { mark('mha-drawing', true); }  // the offline copy (no kernel) draws a scene at once
    (function poll() { if (busy()) { setTimeout(poll, 50); } })();
  }, true);
})();
