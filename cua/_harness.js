// The harness's half in the page, run in its isolated world (cua/_isolated.py), where the app
// can neither see nor replace it. Called as (method, ...args): on first use in a world it installs
// `globalThis.__aui` — a MutationObserver and a scroll listener that run for the page's whole
// life, so settling and change detection can ask "did anything happen since the action started?"
// instead of watching from the moment they are called — then it calls `__aui[method](...args)`.
(method, ...args) => {
  const install = () => {
    const state = {mutations: 0, scrolls: 0, moves: 0, last: 0, mark: null, settleFrom: null,
                   target: null, baseline: null, scrolled: new Set()};
    new MutationObserver(records => { state.mutations += records.length; state.last = performance.now(); })
      .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    document.addEventListener('scroll', event => {
      state.scrolls += 1; state.last = performance.now();
      // Remember what scrolls (most recent last, a bounded few), so settling can watch its position.
      const el = event.target;
      if (el && el.nodeType === 1) {
        state.scrolled.delete(el); state.scrolled.add(el);
        if (state.scrolled.size > 32) state.scrolled.delete(state.scrolled.values().next().value);
      }
    }, {capture: true, passive: true});

    const ACTIONABLE = 'button,a[href],input,select,textarea,label,summary,option,[role=button],[role=link],' +
      '[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=slider],[role=switch],' +
      '[onclick],[tabindex],[contenteditable=true]';

    const unique = id => { try { return document.querySelectorAll('#' + CSS.escape(id)).length === 1; } catch (e) { return false; } };
    const selectorFor = el => {
      const parts = [];
      for (let node = el; node && node.nodeType === 1 && node !== document.documentElement; node = node.parentElement) {
        if (node.id && unique(node.id)) { parts.unshift('#' + CSS.escape(node.id)); break; }
        let part = node.localName;
        const parent = node.parentElement;
        if (parent) {
          const same = Array.from(parent.children).filter(c => c.localName === node.localName);
          if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(node) + 1) + ')';
        }
        parts.unshift(part);
      }
      return parts.join(' > ') || null;
    };
    const textOf = el => {
      const own = (el.matches('input,textarea,select') ? (el.value || el.placeholder || '') : '') ||
        el.getAttribute('aria-label') || el.innerText || el.textContent || el.getAttribute('title') || '';
      return own.replace(/\s+/g, ' ').trim().slice(0, 120);
    };
    // What a serve-time transform added (cua/_transform.py INJECTED_ATTRIBUTE): a decoy, a banner…
    const injectedIn = el => { const marked = el.closest('[data-aui-inject]'); return marked ? marked.getAttribute('data-aui-inject') : null; };
    const describe = el => {
      if (!el || el.nodeType !== 1) return null;
      const r = el.getBoundingClientRect();
      return {tag: el.localName, id: el.id || null, text: textOf(el), selector: selectorFor(el),
              box: {x: r.x, y: r.y, width: r.width, height: r.height}, injected: injectedIn(el)};
    };
    const deepest = (x, y) => {
      let el = document.elementFromPoint(x, y);
      // Descend into open shadow roots so the record names what the user actually sees.
      while (el && el.shadowRoot) {
        const inner = el.shadowRoot.elementFromPoint(x, y);
        if (!inner || inner === el) break;
        el = inner;
      }
      return el;
    };
    const actionableAt = (x, y) => {
      const el = deepest(x, y);
      if (!el) return null;
      const actionable = el.closest(ACTIONABLE);
      return actionable && actionable !== document.body ? actionable : el;
    };
    const elementAt = (x, y) => describe(actionableAt(x, y));
    const fingerprint = () => {
      // FNV-1a over the markup plus what markup does not show: form values, checks, scroll offsets.
      let extra = '|' + scrollX + ',' + scrollY;
      for (const el of document.querySelectorAll('input,textarea,select')) extra += '|' + el.value + (el.checked ? '*' : '');
      for (const el of document.querySelectorAll('*')) if (el.scrollTop || el.scrollLeft) extra += '|' + el.scrollTop + ',' + el.scrollLeft;
      const active = document.activeElement;
      extra += '|' + (active ? active.localName + '#' + active.id : '');
      const text = (document.documentElement ? document.documentElement.outerHTML : '') + extra;
      let hash = 0x811c9dc5;
      for (let i = 0; i < text.length; i++) { hash ^= text.charCodeAt(i); hash = Math.imul(hash, 0x01000193); }
      return (hash >>> 0).toString(16) + ':' + text.length;
    };
    const finite = a => a.playState === 'running' && a.effect && Number.isFinite(a.effect.getComputedTiming().endTime);
    // Infinite loops (spinners, marquees) never settle: only finite animations are waited for.
    const busy = () => !!document.getAnimations && document.getAnimations().some(finite);
    // Motion a step waits for (cua/_settle.py): the scroll positions of the window and of every element
    // that has scrolled, and the box of the element the action aimed at — unless an infinite animation
    // may move that element, which would never stop: one on the element or an ancestor (a pulsing
    // button), or one anywhere that animates a property other than paint-only ones and so can move
    // the layout around it (a bar whose height pulses above the button). Paint-only properties
    // (transforms, opacity, colours, filters, shadows) never move another element's box.
    const PAINT_ONLY = /^(offset|computedOffset|easing|composite|transform|translate|rotate|scale|opacity|color|background.*|filter|backdropFilter|boxShadow|textShadow|outline.*|border.*Color|fill.*|stroke.*|clipPath|visibility)$/;
    const layoutAnimations = new WeakMap();
    const animatesLayout = a => {
      let known = layoutAnimations.get(a);
      if (known === undefined) {
        try {
          known = a.effect.getKeyframes().some(frame => Object.keys(frame).some(key => !PAINT_ONLY.test(key)));
        } catch (e) { known = true; }
        layoutAnimations.set(a, known);
      }
      return known;
    };
    const looping = el => !!document.getAnimations && document.getAnimations().some(a =>
      a.playState === 'running' && a.effect && !Number.isFinite(a.effect.getComputedTiming().endTime) &&
      ((a.effect.target instanceof Element && a.effect.target.contains(el)) || animatesLayout(a)));
    const sample = () => {
      let scroll = scrollX + ',' + scrollY;
      for (const el of state.scrolled) if (el.isConnected) scroll += '|' + el.scrollLeft + ',' + el.scrollTop;
      const t = state.target;
      let box = '';
      if (t && t.isConnected && !looping(t)) {
        const r = t.getBoundingClientRect();
        box = r.x + ',' + r.y + ',' + r.width + ',' + r.height;
      }
      return {scroll, box};
    };
    const targetAnimating = () => {
      const t = state.target;
      return !!(t && t.isConnected && t.getAnimations && t.getAnimations().some(finite));
    };
    const changes = () => state.mutations + state.scrolls + state.moves;
    // The observation of a step may be taken while the page settles (see cua._settle): settleStart
    // notes what has happened so far, and settle reports whether anything happened after it. It also
    // says whether a finite animation runs now: settle will then see it, and an observation taken
    // now would be taken again.
    const settleStart = () => { state.settleFrom = changes(); return {busy: busy()}; };
    // Settled: no finite animation runs, the DOM has been quiet for quietMs since its last change
    // (if it changed since the action), and nothing watched has moved for quietMs nor for the last
    // MIN_FRAMES frames. A smooth scroll started by a click runs on the compositor: the frame that
    // handled the click asks for it, the next starts it, and the main thread sees the first movement
    // only in the one after that. What a page does when a scroll ends (`scrollend`: start a slide)
    // comes a frame after the last movement. Frames, not milliseconds: a loaded machine has slow ones.
    // Capped at capMs, or at motionCapMs once a scroll or the target moved or animated.
    const MIN_FRAMES = 3;
    const settle = (quietMs, capMs, motionCapMs) => new Promise(resolve => {
      const start = performance.now();
      const since = state.mark === null ? start : state.mark;
      state.mark = null;
      const before = state.mutations;
      const from = state.settleFrom === null ? changes() : state.settleFrom;
      state.settleFrom = null;
      let previous = state.baseline || sample();
      state.baseline = null;
      const motionCap = Math.max(capMs, motionCapMs || 0);
      let done = false, wasBusy = false, timer = null, frame = null, stillFrames = 0, lastMotion = null, cap = capMs;
      const waited = new Set();
      const finish = capped => {
        if (done) return;
        done = true;
        clearTimeout(backstop); clearTimeout(timer); cancelAnimationFrame(frame);
        resolve({ms: performance.now() - start, mutations: state.mutations - before, capped,
                 late: changes() - from, busy: wasBusy, motionMs: lastMotion === null ? 0 : lastMotion - start,
                 waitedFor: [...waited]});
      };
      // rAF does not fire in a hidden or throttled page; the timer is the backstop for the cap.
      let backstop = setTimeout(() => finish(true), capMs);
      const moved = (now, what) => {
        waited.add(what);
        lastMotion = now;
        if (cap !== motionCap) {
          cap = motionCap;
          clearTimeout(backstop);
          backstop = setTimeout(() => finish(true), Math.max(0, start + cap - now));
        }
      };
      const tick = () => {
        if (done) return;
        const now = performance.now();
        if (now - start >= cap) { finish(true); return; }
        const moving = busy();
        if (moving) { wasBusy = true; waited.add('animation'); }
        const changed = state.last >= since;
        if (changed) waited.add('dom');
        const quietFrom = Math.max(changed ? state.last : -Infinity, lastMotion === null ? -Infinity : lastMotion);
        if (!moving && stillFrames >= MIN_FRAMES && now - quietFrom >= quietMs) { finish(false); return; }
        if (frame === null) frame = requestAnimationFrame(onFrame);
        // Waiting out a quiet window: check when it ends, not at the next frame after it.
        clearTimeout(timer);
        if (!moving && stillFrames >= MIN_FRAMES) timer = setTimeout(tick, Math.max(1, quietFrom + quietMs - now + 0.5));
      };
      const onFrame = () => {
        frame = null;
        if (done) return;
        const now = performance.now();
        const current = sample();
        const scrolled = current.scroll !== previous.scroll, shifted = current.box !== previous.box;
        if (scrolled) moved(now, 'scroll');
        if (shifted) moved(now, 'target');
        if (scrolled || shifted) state.moves += 1;  // counts as a late change: an early observation is retaken
        if (targetAnimating()) moved(now, 'target animation');
        stillFrames = lastMotion === now ? 0 : stillFrames + 1;
        previous = current;
        tick();
      };
      frame = requestAnimationFrame(onFrame);
    });
    const waitForChange = capMs => new Promise(resolve => {
      // Resolves at the first DOM change or scroll (wheel scrolling lands a frame or more later).
      const start = performance.now();
      let timer = null;
      const done = changed => {
        observer.disconnect();
        document.removeEventListener('scroll', onScroll, true);
        clearTimeout(timer);
        resolve({changed, ms: performance.now() - start});
      };
      const onScroll = () => done(true);
      const observer = new MutationObserver(() => done(true));
      observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
      document.addEventListener('scroll', onScroll, {capture: true, passive: true});
      timer = setTimeout(() => done(false), capMs);
    });
    const probe = (x, y) => {
      state.mark = performance.now();
      const focused = document.activeElement === document.body ? null : document.activeElement;
      const element = x === null ? focused : actionableAt(x, y);
      // What the action aims at, and where everything is before it acts: settling watches for motion from here.
      state.target = element;
      state.baseline = sample();
      return {target: describe(element), fingerprint: fingerprint()};
    };
    return globalThis.__aui = {state, elementAt, fingerprint, settleStart, settle, waitForChange, probe, describe};
  };
  return (globalThis.__aui || install())[method](...args);
}
