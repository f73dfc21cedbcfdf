"""Input permissiveness: values can be typed, not only dragged or confirmed with a special key.

Both fixes are small injected scripts, because sliders and fields are often created by the
app's own scripts after load, where no static rewrite can reach; they are written without
globals or named functions so they never collide with the app's own.
"""

from __future__ import annotations

import re

from ._document import AppDocument, TransformOutcome

SLIDER_JS = r"""(() => {
  // aui: a number field and step buttons beside every range slider, present or created later.
  // The field carries the slider's min/max/step, so a value out of range is plainly not for it,
  // and it also understands the words "max" and "min" typed into it.
  const aui = {
    seq: 0, typing: null, words: '',
    labelOf(range) {
      const text = range.getAttribute('aria-label') || (range.labels && range.labels[0] && range.labels[0].innerText)
        || range.title || (range.previousElementSibling && range.previousElementSibling.textContent) || range.id;
      // Labels often end with the current value ("Short break 5 min"): keep the name only, but
      // only when it is the slider's own value ("Read 20 pages" is a name).
      const name = (text || '').trim().replace(/\s+/g, ' ');
      const tail = new RegExp('\\s*' + String(range.value).replace('.', '\\.') + '\\s*[^\\s\\d]{0,6}$');
      return (name.replace(tail, '') || name || 'value').slice(0, 40);
    },
    extreme(range, word) {
      if (/^(max|maximum|highest|top)$/.test(word)) return range.max || '100';
      if (/^(min|minimum|lowest|bottom)$/.test(word)) return range.min || '0';
      return null;
    },
    push(range, value) {
      range.value = value;
      range.dispatchEvent(new Event('input', {bubbles: true}));
      range.dispatchEvent(new Event('change', {bubbles: true}));
    },
    enhance(range) {
      if (range.dataset.auiEnhanced) return;
      range.dataset.auiEnhanced = '1';
      if (!range.id) range.id = 'aui-range-' + (++aui.seq);
      const label = aui.labelOf(range);
      const group = document.createElement('span');
      group.className = 'aui-range-group';
      range.parentNode.insertBefore(group, range);
      group.appendChild(range);
      const box = document.createElement('span');
      box.className = 'aui-stepper';
      const button = (sign, text) => {
        const b = document.createElement('button');
        b.type = 'button'; b.className = 'aui-step'; b.textContent = text;
        b.id = range.id + (sign < 0 ? '-dec' : '-inc');
        // Short names and arrow glyphs: a "+" reads as the app's own "add", "Increase <label>" as
        // the control the label names, and "Step" as the steps of a sequencer, drawing clicks.
        b.setAttribute('aria-label', sign < 0 ? 'Decrease' : 'Increase');
        b.addEventListener('click', () => { sign < 0 ? range.stepDown() : range.stepUp(); aui.push(range, range.value); field.value = range.value; });
        return b;
      };
      const field = document.createElement('input');
      field.type = 'number'; field.className = 'aui-number'; field.id = range.id + '-number';
      for (const key of ['min', 'max', 'step']) if (range.getAttribute(key) !== null) field.setAttribute(key, range.getAttribute(key));
      field.value = range.value;
      field.setAttribute('aria-label', label);
      field.addEventListener('focus', () => { aui.words = ''; if (!aui.restoring) field.select(); });
      field.addEventListener('input', () => {
        aui.typing = {id: range.id, value: field.value, at: performance.now()};
        if (field.value !== '' && !Number.isNaN(Number(field.value))) aui.push(range, field.value);
      });
      // A number field drops letters, so words are collected from the keys themselves.
      field.addEventListener('keydown', e => {
        if (e.key.length !== 1 || !/[a-z]/i.test(e.key) || e.ctrlKey || e.metaKey || e.altKey) return;
        e.preventDefault();
        aui.words = (aui.words + e.key.toLowerCase()).slice(-12);
        const value = aui.extreme(range, aui.words);
        if (value !== null) { field.value = value; aui.push(range, value); aui.typing = {id: range.id, value, at: performance.now()}; }
      });
      // Every keystroke already pushed its value. Pushing again on commit would re-render the app
      // between the mousedown and the click that moved focus away, and swallow that click.
      field.addEventListener('change', () => { if (field.isConnected) field.value = range.value; });
      field.addEventListener('keydown', e => { if (e.key === 'Enter') { aui.typing = null; field.value = range.value; } });
      const follow = () => { if (document.activeElement !== field) field.value = range.value; };
      range.addEventListener('input', follow);
      range.addEventListener('change', follow);
      box.append(button(-1, '\u25BC'), field, button(1, '\u25B2'));
      group.appendChild(box);
      // The app re-rendered the slider while someone was typing into its field: keep typing there.
      // (Chromium may report the removed field as changed and blurred, so recency decides, not events.)
      const recent = aui.typing && aui.typing.id === range.id && performance.now() - aui.typing.at < 1000;
      if (recent && (!document.activeElement || document.activeElement === document.body)) {
        aui.restoring = true; field.focus(); field.value = aui.typing.value; aui.restoring = false;
      }
    },
    scan(root) {
      if (root.matches && root.matches('input[type=range]')) aui.enhance(root);
      if (root.querySelectorAll) root.querySelectorAll('input[type=range]').forEach(aui.enhance);
    },
  };
  aui.scan(document);
  new MutationObserver(records => records.forEach(r => r.addedNodes.forEach(aui.scan)))
    .observe(document.documentElement, {childList: true, subtree: true});
})();
"""

SLIDER_CSS = """/* aui: slider companions */
.aui-range-group { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 4px; max-width: 100%; }
.aui-range-group > input[type=range] { flex: 1 1 80px; min-width: 60px; }
.aui-stepper { display: inline-flex; align-items: center; gap: 2px; }
.aui-stepper .aui-step { min-width: 44px; min-height: 44px; font-size: 18px; background: #ffffff; color: #111111;
  border: 1px solid #555555; border-radius: 4px; cursor: pointer; }
.aui-stepper .aui-number { width: 64px; min-height: 44px; font-size: 15px; background: #ffffff; color: #111111;
  border: 1px solid #555555; border-radius: 4px; padding: 0 4px; }
"""


def slider_companions(doc: AppDocument) -> TransformOutcome:
    """Number inputs and step buttons beside sliders (input permissiveness)."""
    outcome = TransformOutcome()
    static = doc.soup.find_all("input", attrs={"type": re.compile("^range$", re.I)})
    scripted = len(re.findall(r"""type\s*=\s*\\?["']?range|\.type\s*=\s*["']range""", _scripts_text(doc)))
    if not static and not scripted:
        return outcome
    for range_input in static:
        if not range_input.get("id"):
            outcome.details.append("a slider without an id gets one at run time")
    changed = doc.inject_style("slider_companions", SLIDER_CSS)
    changed = doc.inject_script("slider_companions", SLIDER_JS) or changed
    if changed:
        outcome.note(f"number input and -/+ buttons for {len(static)} sliders in the markup"
                     + (" and sliders the scripts create" if scripted else ""), max(1, len(static)))
    return outcome



COMMIT_JS = r"""(() => {
  // aui: a value typed into a field that only reacts to Enter also takes effect when the field
  // is left for another control, as if Enter had been pressed.
  const FIELDS = 'input:not([type]), input[type=text], input[type=search], input[type=number], input[type=email], '
    + 'input[type=url], input[type=tel]';
  const BUTTONS = 'button, [role=button], input[type=button], input[type=submit]';
  const committed = new WeakMap();
  let pressed = null;
  const isField = el => el && el.matches && el.matches(FIELDS) && !el.classList.contains('aui-number');
  document.addEventListener('pointerdown', e => { pressed = e.target; }, true);
  document.addEventListener('focusin', e => { if (isField(e.target)) committed.set(e.target, e.target.value); }, true);
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && e.isTrusted && isField(e.target)) committed.set(e.target, e.target.value);
  }, true);
  document.addEventListener('change', e => {
    const field = e.target;
    if (!isField(field) || !field.isConnected || committed.get(field) === field.value) return;
    if (field.form) return;  // forms are submitted by their own buttons
    const button = pressed && pressed.closest && pressed.closest(BUTTONS);
    // The field's own button (Apply, Add) commits it already: pressing Enter too would do it twice.
    let row = field.parentElement;
    if (row && row.tagName === 'LABEL') row = row.parentElement;
    if (button && row && row.contains(button)) return;
    committed.set(field, field.value);
    for (const type of ['keydown', 'keypress', 'keyup']) {
      field.dispatchEvent(new KeyboardEvent(type, {key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true}));
    }
  }, true);
})();
"""
_ENTER_HANDLING = re.compile(r"""['"]Enter['"]|keyCode\s*===?\s*13|which\s*===?\s*13""")


def commit_typed_values(doc: AppDocument) -> TransformOutcome:
    """Fields that act only on Enter also act when left for another control (input permissiveness)."""
    outcome = TransformOutcome()
    if not _ENTER_HANDLING.search(_scripts_text(doc)):
        return outcome  # nothing in the app waits for Enter
    if doc.inject_script("commit_typed_values", COMMIT_JS):
        outcome.note("fields that act on Enter also act when the agent moves on to another control")
    return outcome



def _scripts_text(doc: AppDocument) -> str:
    return "\n".join(s.get_text() for s in doc.soup.find_all("script") if not s.has_attr("data-aui"))
