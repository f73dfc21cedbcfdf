// What the display proof of a defect (perturb/_defect_proof.py) asks of a page, in the harness's
// isolated world: centre the bound element (returns the scroll position), scroll to a position,
// or read the bound element's defect marker. Scrolls are instant: a page's `scroll-behavior: smooth`
// would otherwise still be moving when the position is read and the boxes measured.
(what, selector, mark, y) => {
  const el = document.querySelector(selector);
  if (what === 'centre') {
    if (el) el.scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'});
    return window.scrollY;
  }
  if (what === 'scroll') {
    window.scrollTo({left: 0, top: y, behavior: 'instant'});
    return window.scrollY;
  }
  if (what === 'marker') return el ? el.getAttribute(mark) : null;
  throw new Error('unknown probe: ' + what);
}
