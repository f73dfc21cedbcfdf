// Counts the app's pending short timers (cua/_timers.py). A context init script: it runs in the
// page's main world before any of the app's scripts, so every `setTimeout` the app makes is seen.
//
// Counted: a setTimeout with a callback and a delay of at most `limitMs`, set by the app's own code
// (a handler, a load script: depth 0) or by the callback of such a timer (depth 1). One set deeper,
// by the callback of a depth-1 timer, is a clock (a ticking chain re-arms for ever), not an action's
// pending effect: not counted. `drain(capMs)` resolves, once no counted timer is pending or after `capMs`, to
// {had, waitedMs, pending}: how many were pending when it was called, how long it waited, how many
// are left. The app sees ordinary functions; its timers behave exactly as before.
(limitMs) => {
  const key = Symbol.for('aui.shortTimers');
  if (window[key]) return;
  const pending = new Set(), realSet = window.setTimeout, realClear = window.clearTimeout;
  let depth = 0;
  const setTimeout = {setTimeout(callback, delay, ...args) {
    if (typeof callback !== 'function') return realSet.call(window, callback, delay, ...args);
    const level = depth, counted = (Number(delay) || 0) <= limitMs && level < 2;
    const id = realSet.call(window, function (...given) {
      pending.delete(id);
      const outer = depth;
      depth = level + 1;
      try { return callback.apply(this, given); } finally { depth = outer; }
    }, delay, ...args);
    if (counted) pending.add(id);
    return id;
  }}.setTimeout;
  const clearTimeout = {clearTimeout(id) { pending.delete(id); return realClear.call(window, id); }}.clearTimeout;
  Object.defineProperty(window, 'setTimeout', {value: setTimeout, writable: true, configurable: true, enumerable: true});
  Object.defineProperty(window, 'clearTimeout', {value: clearTimeout, writable: true, configurable: true, enumerable: true});
  const drain = capMs => new Promise(resolve => {
    const started = performance.now(), had = pending.size;
    const look = () => {
      const waited = performance.now() - started;
      if (pending.size === 0 || waited >= capMs) resolve({had, waitedMs: waited, pending: pending.size});
      else realSet.call(window, look, 10);
    };
    look();
  });
  Object.defineProperty(window, key, {value: {drain}, enumerable: false});
}
