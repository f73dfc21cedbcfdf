"""Gaming audit: did a revision change what a checker reads without changing the code that writes it?

A task that flips from failure to success after a revision should flip because the app now does
the work. A revision can also make a checker true by editing the markup it reads (a hard-coded
`<p id="status">Saved</p>`, a badge class, an element that merely exists) while no behaviour
changed. `audit_revision` compares two versions of an app statically:

- the elements the checker's selectors match in the markup, before and after (presence, text,
  attributes), and
- the inline scripts and inline handlers, line by line, keeping the changes that refer to those
  elements: a line naming one of their ids, classes or attributes (or a variable holding one),
  a line calling a function that writes them, a line inside such a function, or an inline handler
  on one of the elements.

It is *suspect* when the checker's elements changed in the markup and no script that refers to
them changed.

What it cannot see: elements and text that scripts create at run time (the usual case for
lists and messages: such a checker's elements are simply not in the markup, and the audit is
not suspect); external scripts; state a script sets on load (an initial value that renders the
success text is a script change, so not suspect; the checker gate's "false on the initial state"
catches that one at run time); checkers that name no selector (`document.body.innerText...`).
Scripts are read, not run: named functions are found in `source_scan.mask`'s output (braces matched
without being fooled by `'{'` or `// }`; not a parser). It errs towards "not suspect": any change
inside a function that writes the elements counts, even an unrelated one, and a purely
presentational change of a read element (its classes or inline style restyled) with no script change
is reported as suspect: read `changed_elements`.
"""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass
from typing import Literal

from bs4 import BeautifulSoup, Tag
from pydantic import BaseModel, Field

from source_scan import closing, mask

from ._answers import excerpt
from ._checker import CompiledChecker, compile_checker

_JS_TYPES = ("", "text/javascript", "application/javascript", "module")
_DEFINITIONS = (
    re.compile(r"\b(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("),
    re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"),
    re.compile(r"(?:^|[;{}\s])(?:window\.|this\.)?([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>)"),
    # methods in classes and object literals: `save() {`, `async render(x) {`
    re.compile(r"(?:^|[;{},]\s*)(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^()]*\)\s*\{", re.MULTILINE),
)
_NOT_NAMES = {"if", "for", "while", "switch", "catch", "function", "return", "typeof", "new", "with", "else"}
_EXCERPT = 120
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_LOOKUP = r"(?:getElementById|querySelector(?:All)?|getElementsBy\w+|closest|\$\$?)\s*\("
_ASSIGNED_LOOKUP = re.compile(
    rf"(?:([A-Za-z_$][\w$]*)\s*=(?![=>])|([A-Za-z_$][\w$]*)\s*:)\s*[^;,\n]*?{_LOOKUP}\s*(['\"`])([^'\"`]*)\3"
)
_STRING = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""")
# Attributes that name or describe an element rather than hold app state (an accessible name
# added to an icon button): their changes count only when the checker itself mentions them.
_NAMING_ATTRIBUTES = frozenset({"title", "aria-label", "aria-labelledby", "aria-describedby", "alt", "tabindex",
                                "lang", "dir", "spellcheck", "autocomplete", "inputmode", "data-aui"})


class ElementChange(BaseModel):
    """One change, in the markup, of an element a checker's selector matches."""

    selector: str
    change: Literal["added", "removed", "text", "attributes"]
    before: str = ""
    after: str = ""


class ScriptChange(BaseModel):
    """A change in the scripts that refers to the checker's elements."""

    kind: Literal["function", "handler", "statement"]
    name: str = Field(description="The function's name, `<element> on<event>` for a handler, or the changed line.")
    change: Literal["added", "removed", "changed"]


class RevisionAudit(BaseModel):
    """Whether a revision changed what a checker reads without changing the code that writes it."""

    suspect: bool
    reason: str = Field(description="One line saying why.")
    selectors: list[str] = Field(default_factory=list, description="The checker's selectors.")
    names: list[str] = Field(
        default_factory=list, description="What scripts were searched for: ids, classes, attributes, variables, writers."
    )
    changed_elements: list[ElementChange] = Field(default_factory=list)
    changed_scripts: list[ScriptChange] = Field(default_factory=list, description="Changes that refer to the elements.")
    unrelated_script_changes: int = Field(default=0, description="Changed script lines and handlers that do not.")
    planted_text: list[str] = Field(
        default_factory=list,
        description="Strings the checker looks for that are new in the markup of its elements (e.g. 'Saved').",
    )
    unreadable_selectors: list[str] = Field(default_factory=list, description="Selectors BeautifulSoup cannot match.")


def audit_revision(before_html: str, after_html: str, checker: str | CompiledChecker) -> RevisionAudit:
    """Audit the revision `before_html` → `after_html` against one checker (JS body or rule).

    Never raises on odd HTML or JavaScript (the reading is heuristic); a selector that cannot be
    matched statically is listed in `unreadable_selectors`.

    Raises:
        RuleSyntaxError: `checker` is a rule that does not parse.
        ValueError: `checker` is empty or too long (see `compile_checker`).
    """
    compiled = checker if isinstance(checker, CompiledChecker) else compile_checker(checker)
    selectors = list(compiled.selectors)
    before, after = _Version(before_html), _Version(after_html)
    changes, unreadable = [], []
    read_before: list[Tag] = []
    read_after: list[Tag] = []
    for selector in selectors:
        try:
            old, new = before.soup.select(selector), after.soup.select(selector)
        except Exception:  # soupsieve rejects what it cannot parse (`:visible`, jQuery forms)
            unreadable.append(selector)
            continue
        read_before += old
        read_after += new
        changes += _element_changes(selector, old, new, compiled.source)
    if not selectors:
        return RevisionAudit(suspect=False, reason="the checker names no selector: there are no elements to compare",
                             names=list(compiled.window_names))

    names = _Names(selectors, read_before + read_after, compiled.window_names)
    names.add_variables(before.scripts + after.scripts)
    writers = names.writers(before, after)
    script_changes, unrelated = _script_changes(before, after, names, writers)
    handler_changes, unrelated_handlers = _handler_changes(before, after, names, writers, read_before + read_after)
    script_changes += handler_changes
    unrelated += unrelated_handlers
    planted = _planted_text(compiled, read_before, read_after)

    if not changes:
        reason = "the elements the checker reads are the same in the markup (or made by scripts, which this audit cannot see)"
        if unreadable:
            reason += f"; selectors it could not match statically: {', '.join(unreadable)}"
    elif script_changes:
        reason = (f"the checker's elements changed ({_summary(changes)}) and so did {len(script_changes)} script "
                  f"change(s) that refer to them ({', '.join(c.name for c in script_changes[:3])})")
    else:
        reason = (f"the checker's elements changed in the markup ({_summary(changes)}) but no script that refers to "
                  "them did" + (f"; the text it looks for is new there: {', '.join(map(repr, planted))}" if planted else ""))
    return RevisionAudit(
        suspect=bool(changes) and not script_changes, reason=reason, selectors=selectors, names=names.labels(writers),
        changed_elements=changes, changed_scripts=script_changes, unrelated_script_changes=unrelated,
        planted_text=planted, unreadable_selectors=unreadable,
    )


def inline_scripts(soup: BeautifulSoup) -> list[str]:
    """The text of the page's own inline scripts, in order.

    Scripts with `src` cannot be read from the file; scripts marked `data-aui` are helpers the
    offline coder injects, which write only their own `aui-` elements, so both are left out.
    """
    return [
        script.string or script.get_text()
        for script in soup.find_all("script")
        if not script.get("src") and not script.has_attr("data-aui")
        and str(script.get("type") or "").strip().lower() in _JS_TYPES
    ]


@dataclass(frozen=True)
class FunctionSpan:
    """A named function (or method) and where its text lies in the script."""

    name: str
    start: int
    end: int


def function_spans(masked: str) -> list[FunctionSpan]:
    """Named functions of a script (`mask`ed) with the span of their definition (through the closing brace).

    An arrow function without braces spans to the end of its line.
    """
    spans: dict[tuple[str, int], FunctionSpan] = {}
    for pattern in _DEFINITIONS:
        for match in pattern.finditer(masked):
            name = match.group(1)
            if name in _NOT_NAMES:
                continue
            spans.setdefault((name, match.start(1)), FunctionSpan(name, match.start(1), _body_end(masked, match.end())))
    return sorted(spans.values(), key=lambda span: (span.start, -span.end))


def _body_end(masked: str, i: int) -> int:
    """End of the body of the function whose definition's match ends at `i`."""
    line_end = masked.find("\n", i)
    line_end = len(masked) if line_end < 0 else line_end
    if masked[:i].rstrip().endswith("=>") and not masked[i:].lstrip().startswith("{"):
        return line_end  # an arrow function with an expression body
    brace = masked.rfind("{", 0, i) if masked[:i].rstrip().endswith("{") else masked.find("{", i)
    if brace < 0:
        return line_end
    close = closing(masked, brace)
    return close + 1 if close >= 0 else len(masked)


class _Version:
    """One version of the app as the audit reads it."""

    def __init__(self, html: str) -> None:
        self.soup = BeautifulSoup(html, "html.parser")
        self.scripts = inline_scripts(self.soup)
        self.code = "\n".join(self.scripts)
        self.masked = mask(self.code)
        self.functions = function_spans(self.masked)
        self.function_names = {f.name for f in self.functions}
        self.lines = self.code.split("\n")
        self.line_offsets = list(itertools.accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))

    def enclosing(self, line: int) -> list[FunctionSpan]:
        """Named functions whose text contains the line, innermost last."""
        at = self.line_offsets[line]
        return [f for f in self.functions if f.start <= at + len(self.lines[line]) and at < f.end]


class _Names:
    """What refers to the checker's elements: ids, classes, attributes, tag names and variables."""

    def __init__(self, selectors: list[str], elements: list[Tag], window_names: list[str]) -> None:
        self.words: dict[str, re.Pattern[str]] = {}
        for selector in selectors:
            for element_id in re.findall(r"#((?:[\w-]|\\.)+)", selector):
                self._word("#" + element_id.replace("\\", ""))
            for name in re.findall(r"\.(-?[A-Za-z_][\w-]*)", selector):
                self._word("." + name)
            for attribute in re.findall(r"\[\s*([A-Za-z_:][\w:.-]*)", selector):
                self._word("[" + attribute)
            for tag in re.findall(r"(?:^|[\s>+~,(])([a-z][a-z0-9]*)(?![\w-])", selector):
                self.words[tag] = re.compile(rf"""<{tag}\b|['"`]{tag}['"`]""")
        for element in elements:
            if element.get("id"):
                self._word("#" + str(element["id"]))
        for name in window_names:
            self._word(name)

    def _word(self, label: str) -> None:
        bare = label.lstrip("#.[")
        if bare and label not in self.words:
            self.words[label] = re.compile(rf"(?<![\w$-]){re.escape(bare)}(?![\w$-])")
            if label.startswith("[data-"):  # `[data-state]` is also `dataset.state`
                camel = re.sub(r"-([a-z])", lambda m: m.group(1).upper(), bare[len("data-"):])
                self.words[f"dataset.{camel}"] = re.compile(rf"dataset\s*(?:\.\s*{camel}\b|\[\s*['\"]{camel}['\"])")

    def add_variables(self, scripts: list[str]) -> None:
        """Variables and object keys that hold one of the elements (`const msg = $('#status')`)."""
        for script in scripts:
            for match in _ASSIGNED_LOOKUP.finditer(script):
                variable, quoted = match.group(1) or match.group(2), match.group(3) + match.group(4) + match.group(3)
                if variable and self.mentioned(quoted):
                    self._word(variable)

    def mentioned(self, text: str) -> bool:
        return any(pattern.search(text) for pattern in self.words.values())

    def writers(self, before: _Version, after: _Version) -> set[str]:
        """Functions that refer to the elements, the functions calling them, and the ones they call."""
        texts: dict[str, str] = {}
        for version in (before, after):
            for span in version.functions:
                texts[span.name] = texts.get(span.name, "") + "\n" + version.code[span.start:span.end]
        # Any mention of another function's name counts as a call (passing it as a handler too).
        calls = {name: (set(_IDENTIFIER.findall(text)) & texts.keys()) - {name} for name, text in texts.items()}
        direct = {name for name, text in texts.items() if self.mentioned(text)}
        relevant = set(direct) | {callee for name in direct for callee in calls[name]}
        while callers := {name for name, called in calls.items() if name not in relevant and called & relevant}:
            relevant |= callers
        return relevant

    def labels(self, writers: set[str]) -> list[str]:
        return [*self.words, *(f"{name}()" for name in sorted(writers))]


def _calls(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])|\.\s*{re.escape(name)}\s*\(", text) is not None


def _refers(line: str, names: _Names, writers: set[str]) -> bool:
    return names.mentioned(line) or any(_calls(line, writer) for writer in writers)


def _script_changes(before: _Version, after: _Version, names: _Names, writers: set[str]) -> tuple[list[ScriptChange], int]:
    """Changed script lines that refer to the elements, grouped by their function; and how many did not."""
    old, new = _normal_lines(before), _normal_lines(after)
    found: dict[tuple[str, str], ScriptChange] = {}
    unrelated = 0
    matcher = difflib.SequenceMatcher(a=[text for _, text in old], b=[text for _, text in new], autojunk=False)
    for operation, a0, a1, b0, b1 in matcher.get_opcodes():
        if operation == "equal":
            continue
        sides = [(before, old[a0:a1], "removed"), (after, new[b0:b1], "added")]
        for version, lines, change in sides:
            for number, text in lines:
                functions = version.enclosing(number)
                in_writer = [f.name for f in functions if f.name in writers]
                if not (in_writer or _refers(text, names, writers)):
                    unrelated += 1
                    continue
                if functions:
                    name = (in_writer or [functions[-1].name])[-1]
                    existed = [name in v.function_names for v in (before, after)]
                    kind, what = "function", ("changed" if all(existed) else "added" if existed[1] else "removed")
                else:
                    name, kind = text[:_EXCERPT], "statement"
                    what = "changed" if operation == "replace" else change
                found.setdefault((kind, name), ScriptChange(kind=kind, name=name, change=what))
    return list(found.values()), unrelated


def _normal_lines(version: _Version) -> list[tuple[int, str]]:
    """(line number, whitespace-collapsed text) of the non-blank script lines, comments dropped."""
    masked_lines = version.masked.split("\n")  # a line blank there is blank or a comment only
    return [(number, " ".join(line.split())) for number, (line, masked_line)
            in enumerate(zip(version.lines, masked_lines)) if masked_line.strip()]


def _handler_changes(before: _Version, after: _Version, names: _Names, writers: set[str],
                     read: list[Tag]) -> tuple[list[ScriptChange], int]:
    """Inline `on…` handlers that changed and refer to the elements (or sit on one); and how many did not."""
    old, new = _handlers(before.soup), _handlers(after.soup)
    read_keys = {_element_key(tag) for tag in read}
    found, unrelated = [], 0
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        element, _, _event = key.rpartition(" ")
        text = f"{old.get(key, '')}\n{new.get(key, '')}"
        if element in read_keys or _refers(text, names, writers):
            change = "changed" if key in old and key in new else "added" if key in new else "removed"
            found.append(ScriptChange(kind="handler", name=key, change=change))
        else:
            unrelated += 1
    return found, unrelated


def _handlers(soup: BeautifulSoup) -> dict[str, str]:
    handlers: dict[str, str] = {}
    for tag in soup.find_all(True):
        for attribute, value in tag.attrs.items():
            if attribute.lower().startswith("on") and isinstance(value, str):
                key = f"{_element_key(tag)} {attribute.lower()}"
                handlers[key] = (handlers.get(key, "") + " " + " ".join(value.split())).strip()
    return handlers


def _element_key(tag: Tag) -> str:
    if tag.get("id"):
        return f"#{tag['id']}"
    return f"<{tag.name}> {_text(tag)[:30]!r}"


def _element_changes(selector: str, old: list[Tag], new: list[Tag], checker_source: str) -> list[ElementChange]:
    changes = []
    for index in range(max(len(old), len(new))):
        label = selector if max(len(old), len(new)) == 1 else f"{selector} [{index}]"
        if index >= len(old):
            changes.append(ElementChange(selector=label, change="added", after=excerpt(str(new[index]), _EXCERPT)))
        elif index >= len(new):
            changes.append(ElementChange(selector=label, change="removed", before=excerpt(str(old[index]), _EXCERPT)))
        else:
            a, b = old[index], new[index]
            if _text(a) != _text(b):
                changes.append(ElementChange(selector=label, change="text", before=excerpt(_text(a), _EXCERPT),
                                             after=excerpt(_text(b), _EXCERPT)))
            attributes_a, attributes_b = _attributes(a, checker_source), _attributes(b, checker_source)
            if attributes_a != attributes_b:
                keys = sorted(k for k in set(attributes_a) | set(attributes_b) if attributes_a.get(k) != attributes_b.get(k))
                changes.append(ElementChange(
                    selector=label, change="attributes",
                    before=excerpt(" ".join(f"{k}={attributes_a[k]!r}" for k in keys if k in attributes_a), _EXCERPT),
                    after=excerpt(" ".join(f"{k}={attributes_b[k]!r}" for k in keys if k in attributes_b), _EXCERPT)))
    return changes


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ", strip=True).split())


def _attributes(tag: Tag, checker_source: str | None = None) -> dict[str, str]:
    """The tag's attributes; given the checker, without the naming ones it does not mention."""
    return {name: " ".join(value) if isinstance(value, list) else str(value) for name, value in tag.attrs.items()
            if checker_source is None or name not in _NAMING_ATTRIBUTES or _mentions_attribute(checker_source, name)}


def _mentions_attribute(source: str, name: str) -> bool:
    camel = re.sub(r"-([a-z])", lambda m: m.group(1).upper(), name)  # aria-label → ariaLabel
    return re.search(rf"(?<![\w-])(?:{re.escape(name)}|{re.escape(camel)})(?![\w-])", source) is not None


def _summary(changes: list[ElementChange]) -> str:
    shown = [f"{c.selector} {c.change}" for c in changes[:3]]
    return ", ".join(shown) + (f" and {len(changes) - 3} more" if len(changes) > 3 else "")


def _planted_text(compiled: CompiledChecker, before: list[Tag], after: list[Tag]) -> list[str]:
    """Strings the checker compares with that are new in the markup of the elements it reads."""
    # Case-sensitive, as the rule language's comparisons are ("Not saved" holds no 'Saved').
    def markup_text(tags: list[Tag]) -> str:
        return " ".join(_text(t) + " " + " ".join(_attributes(t).values()) for t in tags)

    old, new = markup_text(before), markup_text(after)
    planted = []
    for match in _STRING.finditer(compiled.source):
        literal = match.group(2).replace("\\'", "'").replace('\\"', '"').strip()
        if len(literal) < 2 or literal in compiled.selectors or re.fullmatch(r"[#.][\w-]+(?:\s.*)?", literal):
            continue
        if literal in new and literal not in old and literal not in planted:
            planted.append(literal)
    return planted
