// The app's visible text at load, for the translator (perturb/_translate.py): each distinct text
// node (white space collapsed) and the attributes people read, in page order, as the `german`
// variation of perturb/_content.js will look them up. Only strings with a letter; at most `max`.
(max) => {
  const found = [];
  const seen = new Set();
  const add = raw => {
    const text = (raw || '').replace(/\s+/g, ' ').trim();
    if (!text || seen.has(text) || !/\p{L}/u.test(text) || found.length >= max) return;
    seen.add(text);
    found.push(text);
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && !parent.closest('script,style,noscript,template')) add(node.nodeValue);
  }
  for (const attribute of ['placeholder', 'title', 'aria-label', 'alt']) {
    for (const el of document.body.querySelectorAll('[' + attribute + ']')) add(el.getAttribute(attribute));
  }
  return found;
}
