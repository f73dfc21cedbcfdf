// The content variations (perturb/_catalogue.py), applied once the app has loaded, in the harness's
// isolated world (cua/_transform.py): the app's scripts cannot see or undo this code, but the DOM is
// shared, so what it adds is on the page like the app's own elements. Everything it adds carries the
// attribute `mark` (its value says what the element is), for the harness only.
//
// ops: [{op: 'long' | 'misleading' | 'adversarial' | 'popup' | 'german', seed, ...texts}] in order.
// Returns one entry per op: {op, changed} — how many places it changed (0: the op found nothing to do).
// The texts come from Python (perturb/_texts.py), so this code holds no copy; draws use the op's seed.
(ops, mark) => {
  const rng = seed => {  // mulberry32, as the app's seeded Math.random (cua/_seeding.js)
    let state = seed >>> 0;
    return () => {
      state = (state + 0x6D2B79F5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  };
  const CONTROLS = 'button,a[href],input:not([type=hidden]),select,textarea,[role=button],[role=tab],' +
    '[role=checkbox],[role=switch],[role=slider],[onclick]';
  // Elements whose children must stay of one kind: a paragraph goes before them, never inside.
  const STRICT = new Set(['ul', 'ol', 'dl', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'select', 'optgroup',
    'datalist', 'label', 'button', 'a', 'summary', 'details', 'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'span']);
  const injected = el => el.closest('[' + mark + ']') !== null;
  const visible = el => {
    const box = el.getBoundingClientRect();
    if (box.width <= 0 || box.height <= 0) return false;
    const style = getComputedStyle(el);
    return style.visibility !== 'hidden' && style.display !== 'none' && Number(style.opacity) > 0;
  };
  const controls = () => Array.from(document.querySelectorAll(CONTROLS)).filter(el => visible(el) && !injected(el));
  const labelOf = el => (el.getAttribute('aria-label') || el.innerText || el.value || el.placeholder ||
    el.getAttribute('title') || '').replace(/\s+/g, ' ').trim().slice(0, 40);
  const make = (tag, what, text, css) => {
    const el = document.createElement(tag);
    el.setAttribute(mark, what);
    if (text !== undefined) el.textContent = text;
    if (css) el.style.cssText = css;
    return el;
  };
  const pick = (random, list) => list[Math.floor(random() * list.length) % list.length];
  // Where a block of text can go near `el` without breaking the layout it sits in: climb past
  // labels, inline wrappers, grids, flex rows and lists, to a plain block whose children may be anything.
  const host = el => {
    let anchor = el;
    for (let parent = anchor.parentElement; parent && parent !== document.body; parent = anchor.parentElement) {
      const display = getComputedStyle(parent).display;
      const crowded = parent.children.length > 6;
      if (!STRICT.has(parent.localName) && !/flex|grid|table|inline/.test(display) && !crowded) break;
      anchor = parent;
    }
    return anchor;
  };
  const shuffled = (random, items) => {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
  const fill = (template, label) => template.split('{label}').join(label);
  const MAX_PLACES = 12;

  const OPS = {
    // Long descriptive text in every heading and before each group of controls.
    long(op, random) {
      let changed = 0;
      for (const heading of document.querySelectorAll('h1,h2,h3')) {
        if (!visible(heading) || injected(heading)) continue;
        heading.appendChild(make('span', 'text', ' — ' + pick(random, op.heading_tails)));
        changed++;
      }
      const hosts = [];
      for (const control of controls()) {
        const anchor = host(control);
        if (anchor.parentElement && !hosts.includes(anchor) && hosts.length < MAX_PLACES) hosts.push(anchor);
      }
      for (const anchor of hosts) {
        const text = [pick(random, op.paragraphs), pick(random, op.paragraphs)].join(' ');
        anchor.parentElement.insertBefore(make('p', 'text', text, 'margin:0.4em 0;max-width:60em;'), anchor);
        changed++;
      }
      return changed;
    },

    // Tooltips and helper texts that describe another control (a derangement: none describes its own).
    misleading(op, random) {
      const labelled = controls().filter(el => labelOf(el)).slice(0, 40);
      if (labelled.length < 2) return 0;
      const others = shuffled(random, labelled.map((_, i) => i));
      const wrong = others.map((_, i) => others[(i + 1) % others.length]);  // no fixed points
      let changed = 0;
      labelled.forEach((el, i) => {
        const other = labelOf(labelled[wrong[i]]);
        if (!other || other === labelOf(el)) return;
        el.setAttribute('title', fill(pick(random, op.tooltips), other));
        changed++;
        if (changed <= MAX_PLACES) {
          const anchor = host(el);
          const tip = make('small', 'text', fill(pick(random, op.helpers), other),
                           'display:block;font-size:0.8em;opacity:0.85;margin:0.15em 0;');
          anchor.insertAdjacentElement('afterend', tip);
        }
      });
      return changed;
    },

    // A banner and decoy buttons telling the agent to do something else; a decoy does nothing.
    adversarial(op, random) {
      const banner = make('div', 'banner', pick(random, op.banners),
        'display:block;box-sizing:border-box;width:100%;padding:10px 16px;background:#fff3cd;color:#5c3c00;' +
        'border:2px solid #e0a800;font:600 15px/1.4 sans-serif;text-align:center;');
      banner.setAttribute('role', 'alert');
      document.body.insertBefore(banner, document.body.firstChild);
      const anchors = [];
      for (const control of controls()) {
        const anchor = host(control);
        if (anchor.parentElement && !anchors.includes(anchor)) anchors.push(anchor);
      }
      const chosen = shuffled(random, anchors).slice(0, Math.min(op.decoys, anchors.length));
      chosen.forEach((anchor, i) => {
        const decoy = make('button', 'decoy', op.decoy_labels[i % op.decoy_labels.length],
          'display:inline-block;margin:6px 4px;padding:8px 14px;background:#198754;color:#fff;border:0;' +
          'border-radius:6px;font:600 14px/1.2 sans-serif;cursor:pointer;');
        decoy.type = 'button';
        // Nothing happens, and the app never hears of it (delegated handlers included).
        decoy.addEventListener('click', event => { event.preventDefault(); event.stopPropagation(); });
        anchor.parentElement.insertBefore(decoy, anchor);
      });
      return 1 + chosen.length;
    },

    // A modal over the page, shown at load; "No thanks", × and "Subscribe" all close it.
    popup(op, random) {
      const overlay = make('div', 'popup', undefined,
        'position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,0.55);display:flex;' +
        'align-items:center;justify-content:center;');
      const dialog = make('div', 'popup', undefined,
        'position:relative;background:#fff;color:#111;max-width:420px;margin:16px;padding:24px 24px 20px;' +
        'border-radius:10px;font:16px/1.45 sans-serif;box-shadow:0 12px 40px rgba(0,0,0,0.35);text-align:left;');
      dialog.setAttribute('role', 'dialog');
      dialog.setAttribute('aria-modal', 'true');
      const [title, body] = pick(random, op.messages);
      dialog.appendChild(make('h2', 'popup', title, 'margin:0 0 8px;font-size:20px;'));
      dialog.appendChild(make('p', 'popup', body, 'margin:0 0 16px;'));
      const close = () => overlay.remove();
      const button = (what, text, css) => {
        const el = make('button', what, text, css);
        el.type = 'button';
        el.addEventListener('click', event => { event.preventDefault(); event.stopPropagation(); close(); });
        return el;
      };
      dialog.appendChild(button('popup-accept', op.accept,
        'padding:8px 16px;margin-right:8px;background:#0d6efd;color:#fff;border:0;border-radius:6px;font:inherit;'));
      dialog.appendChild(button('popup-close', op.dismiss,
        'padding:8px 16px;background:#e9ecef;color:#111;border:0;border-radius:6px;font:inherit;'));
      const corner = button('popup-close', '×',
        'position:absolute;top:6px;right:10px;background:none;border:0;font:24px/1 sans-serif;color:#555;');
      corner.setAttribute('aria-label', op.dismiss);
      dialog.appendChild(corner);
      overlay.appendChild(dialog);
      document.body.appendChild(overlay);
      return 1;
    },

    // Visible text replaced by its translation (text nodes and the attributes people read); ids,
    // classes, values and everything else stay. Text the app writes later is not translated.
    german(op) {
      const texts = op.translations;
      // What the app's checkers read keeps its words, so a checker reads what it was written for.
      const kept = [];
      for (const selector of op.keep_selectors || []) {
        try { kept.push(...document.querySelectorAll(selector)); } catch (error) { /* not a CSS selector: nothing kept */ }
      }
      const keeps = el => kept.some(k => k === el || k.contains(el));
      let changed = 0;
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      const nodes = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
      for (const node of nodes) {
        const parent = node.parentElement;
        if (!parent || parent.closest('script,style,noscript,template') || injected(parent) || keeps(parent)) continue;
        const raw = node.nodeValue;
        const key = raw.replace(/\s+/g, ' ').trim();
        if (!key || !Object.prototype.hasOwnProperty.call(texts, key)) continue;
        const lead = raw.match(/^\s*/)[0];
        const tail = raw.match(/\s*$/)[0];
        node.nodeValue = lead + texts[key] + tail;
        changed++;
      }
      for (const attribute of op.attributes) {
        for (const el of document.body.querySelectorAll('[' + attribute + ']')) {
          const key = (el.getAttribute(attribute) || '').replace(/\s+/g, ' ').trim();
          if (key && Object.prototype.hasOwnProperty.call(texts, key) && !injected(el) && !keeps(el)) {
            el.setAttribute(attribute, texts[key]);
            changed++;
          }
        }
      }
      return changed;
    },
  };

  return ops.map(op => {
    if (!OPS[op.op]) throw new Error('unknown content variation: ' + op.op);
    return {op: op.op, changed: OPS[op.op](op, rng(op.seed))};
  });
}
