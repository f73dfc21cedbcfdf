"""Two pages for proving that a page reused for the next task keeps nothing of the last one.

`LEAKY` writes everything a page can leave behind in a browser: localStorage, sessionStorage,
IndexedDB, a cookie, Cache Storage, a service worker (refused by the context, tried anyway),
history entries, `window.name`, a timer that keeps writing, focus in a field and a scrolled page,
and leaves the mouse over a hover-styled element. `PROBE` reports, once loaded, everything a page
can read of that state, in `#report` as JSON — and of what a caller of `open_app` can set on the page
or its context: the clock (`now`, `typeof __pwClock`), `Math.random`'s first draws (a seed), globals
(init scripts, exposed functions), media emulation, the viewport, online state, permissions, and what
the origin serves for `probe.json` (routes). A fresh context's probe report is the reference.
"""

from __future__ import annotations

LEAKY = """<!doctype html><html><head><style>
  body { margin: 0; height: 3000px; }
  #hot { position: absolute; left: 300px; top: 200px; width: 200px; height: 100px; background: #ccc; }
  #hot:hover { background: #f00; }
</style></head><body>
<input id="field" style="position:absolute;left:20px;top:20px">
<div id="hot">hover me</div>
<p id="done" style="position:absolute;left:20px;top:60px"></p>
<script>
(async () => {
  localStorage.setItem('leak', 'local');
  sessionStorage.setItem('leak', 'session');
  document.cookie = 'leak=cookie; path=/';
  window.name = 'leaky-window';
  history.pushState({n: 1}, '', '#one'); history.pushState({n: 2}, '', '#two');
  try { navigator.serviceWorker.register('/sw.js').catch(() => {}); } catch (e) {}
  try { const cache = await caches.open('leak'); await cache.put('/cached', new Response('cached')); } catch (e) {}
  await new Promise(resolve => {
    const open = indexedDB.open('leak-db', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('things');
    open.onsuccess = () => {
      const tx = open.result.transaction('things', 'readwrite');
      tx.objectStore('things').put('value', 'key');
      tx.oncomplete = () => { open.result.close(); resolve(); };
    };
    open.onerror = resolve;
  });
  setInterval(() => { try { localStorage.setItem('late', String(Date.now())); } catch (e) {} }, 20);
  const channel = new BroadcastChannel('leak'); setInterval(() => channel.postMessage('late'), 20);
  document.getElementById('field').focus();
  window.scrollTo(0, 1200);
  document.getElementById('done').textContent = 'leaked';
})();
</script></body></html>"""

PROBE = """<!doctype html><html><head><style>
  body { margin: 0; height: 3000px; }
  #hot { position: absolute; left: 300px; top: 200px; width: 200px; height: 100px; background: #ccc; }
  #hot:hover { background: #f00; }
</style></head><body>
<div id="hot">hover me</div>
<pre id="report" style="position:absolute;left:20px;top:320px"></pre>
<script>
(async () => {
  const heard = [];
  const channel = new BroadcastChannel('leak'); channel.onmessage = event => heard.push(event.data);
  await new Promise(resolve => setTimeout(resolve, 300));  // long enough for a leaked timer to show itself
  let databases = [];
  try { databases = (await indexedDB.databases()).map(d => d.name); } catch (e) { databases = ['error ' + e]; }
  let cacheNames = [];
  try { cacheNames = await caches.keys(); } catch (e) { cacheNames = ['error ' + e]; }
  let workers = [];
  try { workers = (await navigator.serviceWorker.getRegistrations()).map(r => r.scope); } catch (e) { workers = ['error ' + e.name]; }
  const hot = document.getElementById('hot');
  const report = {
    localStorage: Object.keys(localStorage).sort(), sessionStorage: Object.keys(sessionStorage).sort(),
    cookie: document.cookie, indexedDB: databases, caches: cacheNames, serviceWorkers: workers,
    historyLength: history.length, historyState: history.state, hash: location.hash, href: location.href,
    windowName: window.name, referrer: document.referrer, heard: heard.length,
    navigationType: (performance.getEntriesByType('navigation')[0] || {}).type,
    active: document.activeElement && document.activeElement.localName, scrollY: window.scrollY,
    hovered: hot.matches(':hover'), hotColour: getComputedStyle(hot).backgroundColor,
    focused: document.hasFocus(), visibility: document.visibilityState,
    now: Date.now(), pwClock: typeof window.__pwClock, random: [Math.random(), Math.random(), Math.random()],
    globals: Object.getOwnPropertyNames(window).sort(),
    media: ['(prefers-color-scheme: dark)', 'print', '(prefers-reduced-motion: reduce)', '(forced-colors: active)']
      .filter(query => matchMedia(query).matches),
    viewport: [innerWidth, innerHeight], online: navigator.onLine,
    permissions: await Promise.all(['geolocation', 'notifications'].map(name =>
      navigator.permissions.query({name}).then(status => status.state, error => 'error ' + error.name))),
    served: await fetch('probe.json').then(async response => response.status + ' ' + await response.text(),
                                           error => 'error ' + error.name),
  };
  document.getElementById('report').textContent = JSON.stringify(report);
})();
</script></body></html>"""
