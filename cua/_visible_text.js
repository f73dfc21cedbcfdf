// The page's visible text (`AppEnv.visible_text`, kept as `Trajectory.final_text`), run in the
// harness's isolated world so an app's own `innerText` getter cannot change what is recorded.
// At most `maxChars` UTF-16 units, never cutting a surrogate pair in half; `length` is the whole.
(maxChars) => {
  const text = (document.body && document.body.innerText) || '';
  let end = Math.min(text.length, maxChars);
  if (end > 0 && end < text.length) {
    const last = text.charCodeAt(end - 1);
    if (last >= 0xD800 && last <= 0xDBFF) end -= 1;
  }
  return {text: text.slice(0, end), length: text.length};
}
