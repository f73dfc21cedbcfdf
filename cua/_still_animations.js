// Shows every infinite animation still, at its first frame (`BrowserConfig.still_animations`). A context
// init script: it runs in the page's main world before any of the app's scripts.
//
// An infinite CSS animation (a floating hero picture, drifting blobs, a pulsing button) never ends, so the
// page never looks the same twice: two observations of the same state differ by where the animation
// was when the screenshot was taken. Here each one is stopped as it begins (`animationstart` for CSS
// animations; `Element.prototype.animate` for scripted ones with `iterations: Infinity`), so a page shows
// the same pixels for the same state, whenever it is looked at. Finite animations and
// transitions run as they would: what settling waits for is unchanged.
() => {
  const key = Symbol.for('aui.stillAnimations');
  if (window[key]) return;
  Object.defineProperty(window, key, {value: true});
  const infinite = (animation) => {
    const timing = animation.effect && animation.effect.getTiming();
    return Boolean(timing) && timing.iterations === Infinity;
  };
  // A CSS animation is cancelled: the element is drawn with its own style, as if it had none (a paused one
  // keeps its compositor layer, whose edges are drawn a level differently from one frame to the next).
  // A scripted one is paused at its start instead: the app holds it and may await it.
  const still = (animation, scripted) => {
    try {
      if (!infinite(animation)) return;
      if (scripted) {
        animation.pause();
        animation.currentTime = 0;
      } else {
        animation.cancel();
      }
    } catch (error) { /* an animation the app removed meanwhile */ }
  };
  document.addEventListener('animationstart', (event) => {
    const target = event.target;
    if (!target || typeof target.getAnimations !== 'function') return;
    for (const animation of target.getAnimations()) {
      if (animation.animationName === event.animationName) still(animation, false);
    }
  }, true);
  const animate = Element.prototype.animate;
  Element.prototype.animate = {animate(...args) {
    const animation = animate.apply(this, args);
    still(animation, true);
    return animation;
  }}.animate;
}
