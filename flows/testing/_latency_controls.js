// The controls a user could operate on the page as loaded: visible, enabled, inside the viewport and
// not covered, each with a selector that finds it again, its centre in CSS pixels and a short label.
() => {
  const width = window.innerWidth, height = window.innerHeight;
  const selectorOf = (element) => {
    if (element.id && document.querySelectorAll('#' + CSS.escape(element.id)).length === 1) {
      return '#' + CSS.escape(element.id);
    }
    const parts = [];
    for (let node = element; node && node.nodeType === 1 && node !== document.body; node = node.parentElement) {
      let index = 1;
      for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
        if (sibling.tagName === node.tagName) index += 1;
      }
      parts.unshift(`${node.tagName.toLowerCase()}:nth-of-type(${index})`);
    }
    return ['body', ...parts].join(' > ');
  };
  const found = [];
  const seen = new Set();
  for (const element of document.querySelectorAll('button, a[href], input, select, textarea, [role=button], [onclick]')) {
    const box = element.getBoundingClientRect();
    if (box.width < 4 || box.height < 4 || element.disabled) continue;
    const x = box.left + box.width / 2, y = box.top + box.height / 2;
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) continue;
    const style = getComputedStyle(element);
    if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) === 0) continue;
    const top = document.elementFromPoint(x, y);
    if (!top || !(top === element || element.contains(top) || top.contains(element))) continue;
    const selector = selectorOf(element);
    if (seen.has(selector)) continue;
    seen.add(selector);
    const label = ((element.labels && element.labels[0] && element.labels[0].innerText) || element.getAttribute('aria-label')
      || element.getAttribute('placeholder') || element.innerText || element.getAttribute('name') || element.id
      || element.tagName.toLowerCase()).replace(/\s+/g, ' ').trim().slice(0, 40);
    found.push({
      tag: element.tagName.toLowerCase(), type: (element.getAttribute('type') || '').toLowerCase(), selector, x, y, label,
      value: typeof element.value === 'string' ? element.value : null, checked: Boolean(element.checked),
      options: element.tagName === 'SELECT' ? [...element.options].map((option) => option.value) : [],
    });
  }
  return found;
}
