// Where the page's visible text is drawn: the client rectangles of every non-empty text node inside
// the viewport (perturb/_measure.py), so a font variation can be measured on the pixels it can change.
() => {
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.nodeValue.trim() || !node.parentElement || node.parentElement.closest('script,style,noscript,template')) continue;
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) {
      if (rect.width > 0 && rect.height > 0 && rect.bottom > 0 && rect.right > 0 &&
          rect.top < innerHeight && rect.left < innerWidth) {
        boxes.push([rect.left, rect.top, rect.width, rect.height]);
      }
    }
  }
  return boxes;
}
