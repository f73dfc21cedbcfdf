// One injected GUI defect (perturb/_defects.py), run once the app has loaded, in the harness's
// isolated world (cua/_transform.py): the app's scripts cannot see or undo this code; the DOM and
// its events are shared, so listeners added here see the app's events first (window, capture).
//
// defect: {type, selector, seed, params}. The element the defect is bound to — the first match
// of `selector`, the element the task's reference solution acts on — gets `mark="defect:<type>"`
// (that is how a trajectory knows a step acted on it), now and whenever the app re-renders it (a
// MutationObserver). Display defects are drawn by the transform's CSS on that marker, plus the text
// changes below; interaction defects are listeners that swallow or bend the events on it. Elements
// this code adds carry `mark` with another value (`defect-overlay`).
// Returns {found, detail}: whether the bound element was on the page at load, and what was done.
(defect, mark) => {
  const value = 'defect:' + defect.type;
  const params = defect.params || {};
  const onBound = target => target && target.nodeType === 1 && target.closest('[' + mark + '="' + value + '"]');
  const ownTexts = el => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeValue.trim() && !node.parentElement.closest('script,style,[' + mark + ']:not([' + mark + '="' + value + '"])')) nodes.push(node);
    }
    return nodes;
  };
  const labelOf = el => {
    if (el.labels && el.labels.length) return el.labels[0];
    const labelled = el.getAttribute('aria-labelledby');
    if (labelled) return document.getElementById(labelled.split(/\s+/)[0]);
    return null;
  };
  // Where the element's words are: its own text that is drawn (a card's hidden face is not), or for
  // a field its label's.
  const drawnText = node => node.parentElement.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const textNodesFor = el => {
    const own = ownTexts(el).filter(drawnText);
    if (own.length) return own;
    const label = labelOf(el);
    return label ? ownTexts(label).filter(drawnText) : [];
  };
  const longest = nodes => nodes.reduce((best, node) => (!best || node.nodeValue.trim().length > best.nodeValue.trim().length ? node : best), null);

  // ---- text changes of display defects (made once per element the marker lands on) ----
  // Show `text` as the element's words: its longest text, a field's label, a select's chosen option
  // or an empty field's placeholder; an element with no words at all (an icon) gets it drawn after
  // its content by the transform's CSS (`--aui-defect-text`), so no element is added inside it.
  const showText = (el, text) => {
    if (el.localName === 'select') {  // what a closed drop-down shows: its chosen option
      if (el.selectedIndex < 0) return '';
      el.options[el.selectedIndex].textContent = text;
      written = text;
      return 'selected option renamed';
    }
    const node = longest(textNodesFor(el));
    if (node) {
      const lead = node.nodeValue.match(/^\s*/)[0], tail = node.nodeValue.match(/\s*$/)[0];
      node.nodeValue = lead + text + tail;
      written = text;
      return 'text replaced';
    }
    if ('placeholder' in el && !el.value) { el.placeholder = written = text; return 'placeholder replaced'; }
    el.style.setProperty('--aui-defect-text', JSON.stringify(text));
    return 'text drawn after the element';
  };
  const NEAR_PX = 16;  // inside the padding of the region a display proof compares
  const rewrite = {
    'content-error': el => showText(el, params.text),
    'data-format-error'(el) {
      // A number next to the element (within NEAR_PX of its box) shown in a wrong format; with no
      // number there, a value of the wrong type as its words.
      const box = el.getBoundingClientRect();
      const near = node => {  // where the text itself is drawn, not its (maybe much larger) element
        const range = document.createRange();
        range.selectNodeContents(node);
        const r = range.getBoundingClientRect();
        return r.width > 0 && r.right >= box.left - NEAR_PX && r.left <= box.right + NEAR_PX &&
          r.bottom >= box.top - NEAR_PX && r.top <= box.bottom + NEAR_PX;
      };
      const scopes = [el, labelOf(el), el.parentElement, el.parentElement && el.parentElement.parentElement];
      for (const scope of scopes) {
        if (!scope) continue;
        const nodes = ownTexts(scope).filter(node => /\d/.test(node.nodeValue) && near(node) &&
          !node.parentElement.closest('option,select,textarea'));
        if (nodes.length) {
          const node = nodes[0];
          node.nodeValue = node.nodeValue.replace(/\d[\d,]*(\.\d+)?/, number => {
            const plain = Number(number.replace(/,/g, ''));
            if (params.format === 'scientific') written = plain.toExponential(3);
            else if (params.format === 'nan') written = 'NaN';
            else written = plain.toFixed(7) + '01';
            return written;
          });
          return 'number reformatted';
        }
      }
      return showText(el, params.fallback);
    },
  };

  // ---- the overlapping element (display): a copy of nearby words drawn over the bound element ----
  let overlay = null;
  const placeOverlay = el => {
    if (!overlay) {
      overlay = document.createElement('div');
      overlay.setAttribute(mark, 'defect-overlay');
      overlay.setAttribute('aria-hidden', 'true');
      overlay.textContent = params.text;
      overlay.style.cssText = 'position:absolute;z-index:2147483646;pointer-events:none;box-sizing:border-box;' +
        'padding:2px 6px;background:' + params.background + ';color:#111;font:600 14px/1.3 sans-serif;' +
        'border:1px solid rgba(0,0,0,0.35);border-radius:3px;white-space:nowrap;overflow:hidden;';
      document.body.appendChild(overlay);
    }
    const box = el.getBoundingClientRect();
    if (box.width <= 0 || box.height <= 0) return;
    overlay.style.left = (box.left + scrollX + box.width * params.dx) + 'px';
    overlay.style.top = (box.top + scrollY + box.height * params.dy) + 'px';
    overlay.style.width = Math.max(48, box.width * 0.7) + 'px';
    overlay.style.minHeight = Math.max(18, Math.min(box.height * 0.8, 40)) + 'px';
  };

  let detail = '';
  let written = null;  // the words a text defect wrote: written again when the app re-renders them away
  const stillShown = el => written === null || el.style.getPropertyValue('--aui-defect-text') !== '' ||
    (el.placeholder || '').includes(written) || document.body.textContent.includes(written);
  const apply = () => {
    const el = document.querySelector(defect.selector);
    if (!el) return false;
    const fresh = el.getAttribute(mark) !== value;
    if (fresh) {
      el.setAttribute(mark, value);
      if ('value' in el) fieldValues.set(el, el.value);
    }
    if (rewrite[defect.type] && (fresh || !stillShown(el))) detail = rewrite[defect.type](el) || detail;
    if (defect.type === 'elements-overlapping') placeOverlay(el);
    return true;
  };

  // ---- interaction defects: listeners on window in the capture phase, ahead of the app's ----
  const swallow = event => { event.preventDefault(); event.stopImmediatePropagation(); };
  const fieldValues = new WeakMap();  // the field's value before the keys arrived
  const remember = event => { if (onBound(event.target) && 'value' in event.target) fieldValues.set(event.target, event.target.value); };
  const listen = (types, handler) => types.forEach(type => window.addEventListener(type, handler, true));

  if (defect.type === 'no-response') {
    // Nothing reaches the app, and a field or drop-down does not take the value either.
    listen(['focusin'], remember);
    listen(['pointerdown', 'pointerup', 'mousedown', 'mouseup', 'click', 'dblclick', 'change', 'input'], event => {
      const bound = onBound(event.target);
      if (!bound) return;
      if ((event.type === 'input' || event.type === 'change') && fieldValues.has(bound)) bound.value = fieldValues.get(bound);
      swallow(event);
    });
  } else if (defect.type === 'input-keyboard') {
    // `refuse`: nothing typed reaches the field (it keeps its value) nor the app. `drop`: every
    // second key is lost, and text inserted at once (a paste, Playwright's fill) loses its last character.
    let keys = 0;
    let keyed = false;  // the next input comes from a key (else it is text inserted at once)
    listen(['focusin'], event => { remember(event); keys = 0; });
    listen(['keydown', 'keypress'], event => {
      if (!onBound(event.target)) return;
      const chord = event.ctrlKey || event.metaKey || event.altKey;
      const typing = !chord && (event.key.length === 1 || event.key === 'Enter' || event.key === 'Backspace');
      if (event.type === 'keydown' && typing) { keys++; keyed = true; }
      if (typing && (params.mode === 'refuse' || event.key === 'Enter' || keys % 2 === 0)) swallow(event);
    });
    listen(['beforeinput'], event => { if (onBound(event.target) && params.mode === 'refuse') swallow(event); });
    listen(['input', 'change'], event => {
      const field = event.target;
      if (!onBound(field) || !('value' in field)) return;
      if (params.mode === 'refuse') {
        if (fieldValues.has(field)) field.value = fieldValues.get(field);
        swallow(event);
      } else if (event.type === 'input') {
        if (!keyed && event.data && field.value.length > 0) field.value = field.value.slice(0, -1);
        keyed = false;
      }
    });
  } else if (defect.type === 'navigation-error') {
    // The control leads where another of its kind leads: the click goes to a sibling of the same sort.
    const peerOf = el => {
      for (let scope = el.parentElement, depth = 0; scope && depth < 3; scope = scope.parentElement, depth++) {
        const kind = el.localName + (el.getAttribute('role') ? '[role="' + el.getAttribute('role') + '"]' : '');
        const peers = Array.from(scope.querySelectorAll(kind)).filter(other => other !== el && !other.contains(el) &&
          !el.contains(other) && other.getClientRects().length > 0 && !other.closest('[' + mark + ']'));
        if (peers.length) return peers[params.pick % peers.length];
      }
      return null;
    };
    listen(['click'], event => {
      const bound = onBound(event.target);
      if (!bound || !event.isTrusted) return;
      const peer = peerOf(bound);
      if (!peer) return;
      swallow(event);
      peer.click();
    });
  } else if (defect.type === 'unexpected-result') {
    // The operation is carried out on the wrong thing: a click lands twice, a select picks the next
    // option, a typed number arrives with its first digit changed.
    let echoing = false;
    window.addEventListener('click', event => {
      const bound = onBound(event.target);
      if (!bound || echoing || !event.isTrusted || bound.localName === 'select') return;
      echoing = true;
      try { bound.click(); } finally { echoing = false; }
    }, false);
    listen(['change'], event => {
      const field = event.target;
      if (onBound(field) && field.localName === 'select' && field.options.length > 1) {
        field.selectedIndex = (field.selectedIndex + 1) % field.options.length;
      }
    });
    // The first digits typed after the field takes the focus arrive changed (1 → 2); the field shows them.
    const changed = new WeakSet();
    listen(['focusin'], event => changed.delete(event.target));
    listen(['input'], event => {
      const field = event.target;
      if (!onBound(field) || field.localName === 'select' || changed.has(field) || !/\d/.test(event.data || '')) return;
      const altered = event.data.replace(/\d/, digit => String((Number(digit) + 1) % 10));
      const at = (field.value || '').lastIndexOf(event.data);
      if (at < 0) return;
      field.value = field.value.slice(0, at) + altered + field.value.slice(at + event.data.length);
      changed.add(field);
    });
  }

  const found = apply();
  new MutationObserver(apply).observe(document.documentElement, {childList: true, characterData: true, subtree: true});
  return {found, detail};
}
