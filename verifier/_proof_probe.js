(selectors, maxChars) => {
  // What the elements a checker reads show after a solution's replay: for the repair message.
  const cut = (s) => { const t = String(s).replace(/\s+/g, ' ').trim(); return t.length > maxChars ? t.slice(0, maxChars) + '…' : t; };
  return selectors.map((selector) => {
    let all;
    try { all = document.querySelectorAll(selector); } catch (e) { return {selector, invalid: true}; }
    if (!all.length) return {selector, count: 0};
    const e = all[0];
    const control = e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement || e instanceof HTMLSelectElement;
    const box = e.getBoundingClientRect();
    return {
      selector,
      count: all.length,
      text: cut(e.textContent || ''),
      value: control ? cut(e.value) : null,
      checked: e instanceof HTMLInputElement && (e.type === 'checkbox' || e.type === 'radio') ? e.checked : null,
      hidden: box.width <= 0 || box.height <= 0 || getComputedStyle(e).visibility === 'hidden',
    };
  });
}
