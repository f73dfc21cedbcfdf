// Each selector's first match (one that is not a valid selector finds nothing), and the properties asked for.
([selectors, properties]) => {
  const found = {};
  for (const selector of selectors) {
    let element = null;
    try { element = document.querySelector(selector); } catch (error) { continue; }
    if (!element) continue;
    const style = getComputedStyle(element);
    found[selector] = Object.fromEntries(properties.map(name => [name, style.getPropertyValue(name)]));
  }
  return found;
}
