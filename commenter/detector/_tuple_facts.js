// Layout facts around the element an action acts on, for the offline defect detector
// (commenter/detector/_offline.py). Runs in the harness's isolated world and only reads the page.
//
// what: "before" — the target (the control at (x, y), or the focused element when x is null), its
//       peers (elements of its kind beside it), elements drawn over it, the texts and elements
//       within `pad` px of it;
//       "after"  — the target again (its value, its selected option, its state) and its peers' states.
(what, x, y, pad) => {
  const CONTROL = 'a[href],button,input,select,textarea,summary,label,[role=button],[role=tab],[role=link],' +
    '[role=checkbox],[role=radio],[role=switch],[role=menuitem],[role=option],[onclick],[tabindex]';
  const cssEscape = s => (window.CSS && CSS.escape) ? CSS.escape(s) : s.replace(/[^\w-]/g, '\\$&');
  const cssPath = el => {
    if (el.id && document.querySelectorAll('#' + cssEscape(el.id)).length === 1) return '#' + cssEscape(el.id);
    const parts = [];
    for (let node = el; node && node.nodeType === 1 && node !== document.documentElement && parts.length < 6; node = node.parentElement) {
      if (node.id && document.querySelectorAll('#' + cssEscape(node.id)).length === 1) { parts.unshift('#' + cssEscape(node.id)); break; }
      const same = node.parentElement ? Array.from(node.parentElement.children).filter(c => c.localName === node.localName) : [];
      parts.unshift(node.localName + (same.length > 1 ? `:nth-of-type(${same.indexOf(node) + 1})` : ''));
    }
    return parts.join(' > ');
  };
  const opacity = el => {
    let value = 1;
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) value *= Number(getComputedStyle(node).opacity);
    return value;
  };
  const drawn = el => {
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none' && opacity(el) > 0.05;
  };
  const ownText = el => Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.nodeValue).join(' ').replace(/\s+/g, ' ').trim();
  const labelText = el => {
    const label = (el.labels && el.labels[0]) || null;
    return label ? (label.innerText || '').replace(/\s+/g, ' ').trim() : '';
  };
  const textOf = el => ((/^(input|select|textarea)$/.test(el.localName) ? '' : el.innerText) || '').replace(/\s+/g, ' ').trim().slice(0, 120);
  const rect = el => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  const state = el => {
    const cls = typeof el.className === 'string' ? el.className : '';
    return Boolean(el.checked || el.getAttribute('aria-selected') === 'true' || el.getAttribute('aria-pressed') === 'true' ||
      (el.getAttribute('aria-current') && el.getAttribute('aria-current') !== 'false') ||
      /(^|[\s_-])(active|selected|current|is-on|on|checked)([\s_-]|$)/.test(cls));
  };
  const describe = el => {
    const style = getComputedStyle(el);
    return {
      selector: cssPath(el), tag: el.localName, id: el.id || null, type: el.getAttribute('type'), cls: typeof el.className === 'string' ? el.className : '',
      text: textOf(el), label: labelText(el), value: 'value' in el && el.localName !== 'button' ? String(el.value) : null,
      selected_text: el.localName === 'select' && el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : null,
      box: rect(el), opacity: opacity(el), filter: style.filter, cursor: style.cursor,
      disabled: Boolean(el.disabled || el.getAttribute('aria-disabled') === 'true'),
      background: style.backgroundColor, color: style.color, font_size: parseFloat(style.fontSize),
      margins: [style.marginTop, style.marginRight, style.marginBottom, style.marginLeft].map(parseFloat),
      clipped: (el.scrollWidth > el.clientWidth + 2 && /hidden|clip/.test(style.overflowX)) || style.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 2,
      active: state(el), drawn: drawn(el),
    };
  };
  const targetAt = (px, py) => {
    let el = px === null ? document.activeElement : document.elementFromPoint(px, py);
    if (!el || el === document.body || el === document.documentElement) return null;
    if (el.localName === 'option' && el.closest('select')) el = el.closest('select');
    return el.closest(CONTROL) || el;
  };
  const kindOf = el => el.localName + '|' + (typeof el.className === 'string' ? el.className.split(/\s+/).filter(c => !/active|selected|current|checked|disabled|^on$/.test(c)).sort().join('.') : '');
  const peersOf = el => {
    for (let scope = el.parentElement, depth = 0; scope && depth < 3; scope = scope.parentElement, depth++) {
      const found = Array.from(scope.querySelectorAll(el.localName)).filter(other => other !== el && !other.contains(el) &&
        !el.contains(other) && kindOf(other) === kindOf(el) && drawn(other));
      if (found.length >= 2) return found.slice(0, 24);
    }
    return [];
  };
  const intersect = (a, b) => Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)) *
    Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const overlapping = el => {
    const box = rect(el);
    const found = [];
    for (const other of document.body.querySelectorAll('*')) {
      if (other === el || other.contains(el) || el.contains(other) || found.length >= 5) continue;
      if (el.labels && Array.from(el.labels).includes(other)) continue;
      const style = getComputedStyle(other);
      if (!/absolute|fixed/.test(style.position) || !drawn(other)) continue;
      const painted = ownText(other) || !/rgba\(0, 0, 0, 0\)|transparent/.test(style.backgroundColor);
      if (!painted) continue;
      const r = rect(other);
      const shared = intersect(box, r);
      if (shared >= 0.15 * Math.min(box.width * box.height, r.width * r.height) && shared > 0) {
        found.push({selector: cssPath(other), text: (other.innerText || '').trim().slice(0, 60), box: r});
      }
    }
    return found;
  };
  const near = el => {
    const box = rect(el);
    const area = {x: box.x - pad, y: box.y - pad, width: box.width + 2 * pad, height: box.height + 2 * pad};
    const texts = [], elements = [];
    for (const other of document.body.querySelectorAll('*')) {
      if (other.closest('script,style,option')) continue;
      const r = rect(other);
      if (intersect(area, r) <= 0) continue;
      const own = ownText(other);
      const isControl = other.matches(CONTROL);
      if (own && drawn(other)) texts.push({selector: cssPath(other), text: own.slice(0, 120)});
      if ((own || isControl) && elements.length < 60) elements.push({selector: cssPath(other), text: own.slice(0, 60), drawn: drawn(other)});
    }
    return {texts: texts.slice(0, 40), elements};
  };

  // The element "after" describes is the one "before" found (kept in this isolated world's
  // window), so a drop-down that closed or a pointer now over something else does not change it.
  if (what === 'before') {
    const hit = x === null ? null : document.elementFromPoint(x, y);
    const el = targetAt(x, y);
    window.__auiDetectorTarget = el;
    if (!el) return {target: null};
    const option = hit && hit.localName === 'option' ? {value: hit.value, text: hit.text} : null;
    return {target: describe(el), option, peers: peersOf(el).map(describe), overlapping: overlapping(el), ...near(el)};
  }
  if (what === 'after') {
    const kept = window.__auiDetectorTarget;
    const el = kept && kept.isConnected ? kept : targetAt(x, y);
    return el ? {target: describe(el), peers: peersOf(el).map(describe)} : {target: null};
  }
  throw new Error('unknown measurement: ' + what);
}
