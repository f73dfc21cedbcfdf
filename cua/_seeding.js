// Makes an app's own randomness and clock repeatable (cua/_seeding.py). A context init script: it
// runs in the page's main world before any of the app's scripts, in every document of the context.
//
// seed (a 32-bit integer, or null): Math.random becomes mulberry32 from that seed, so demo data the
//   app draws on load is the same in every rollout with the seed. Each document starts the sequence
//   afresh (a reload draws the same numbers again).
// clockStartMs (epoch ms, or null): the clock starts at that instant and then runs in real time (a
//   constant offset): Date.now(), new Date(), Date(), performance.timeOrigin and Intl date formatting
//   of "now". performance.now(), timers and animation frames are untouched, so they keep working.
//
// The harness's isolated world has globals of its own: none of this reaches it.
(seed, clockStartMs) => {
  if (seed !== null) {
    let state = seed >>> 0;
    // A method definition, like the native function: no prototype, not a constructor.
    const random = {random() {
      state = (state + 0x6D2B79F5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }}.random;
    Object.defineProperty(Math, 'random', {value: random, writable: true, configurable: true, enumerable: false});
  }
  if (clockStartMs !== null) {
    const RealDate = Date;
    const offset = clockStartMs - RealDate.now();
    const now = {now() { return RealDate.now() + offset; }}.now;
    const FixedDate = function Date(...args) {
      if (!new.target) return new RealDate(now()).toString();  // Date() called as a function: a string
      // Subclasses (`class D extends Date`) keep their prototype through new.target.
      return Reflect.construct(RealDate, args.length ? args : [now()], new.target);
    };
    Object.defineProperty(FixedDate, 'length', {value: 7});
    FixedDate.prototype = RealDate.prototype;
    for (const [name, value] of [['now', now], ['parse', RealDate.parse], ['UTC', RealDate.UTC]]) {
      Object.defineProperty(FixedDate, name, {value, writable: true, configurable: true, enumerable: false});
    }
    Object.defineProperty(RealDate.prototype, 'constructor', {value: FixedDate, writable: true, configurable: true, enumerable: false});
    Object.defineProperty(globalThis, 'Date', {value: FixedDate, writable: true, configurable: true, enumerable: false});
    try {
      // The fixed clock's now when the document's monotonic clock read zero, so that
      // timeOrigin + performance.now() reads what Date.now() reads, as an app expects. Not the
      // browser's timeOrigin plus the offset: a renderer maps its monotonic clock to the wall clock
      // once, so after the machine's clock is stepped (a paused VM re-synced) the browser's own
      // timeOrigin is off by the step (30 s once in CI), and the app's clock would carry it.
      const origin = now() - performance.now();
      Object.defineProperty(performance, 'timeOrigin', {get() { return origin; }, configurable: true, enumerable: true});
    } catch (e) { /* no performance API: nothing to shift */ }
    try {
      // Intl formats "now" when given no date: the fixed clock's now.
      const proto = Intl.DateTimeFormat.prototype;
      const format = Object.getOwnPropertyDescriptor(proto, 'format');
      Object.defineProperty(proto, 'format', {configurable: true, enumerable: false, get() {
        const bound = format.get.call(this);
        return date => bound(date === undefined ? now() : date);
      }});
      const formatToParts = proto.formatToParts;
      Object.defineProperty(proto, 'formatToParts', {writable: true, configurable: true, enumerable: false,
        value: {formatToParts(date) { return formatToParts.call(this, date === undefined ? now() : date); }}.formatToParts});
    } catch (e) { /* an engine without Intl: Date alone is fixed */ }
  }
}
