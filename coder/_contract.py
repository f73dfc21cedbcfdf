"""The non-regression contract: ids the current valid checkers use and the app's named functions.

A revision that renames `#hex-value` silently turns a passing task into a failing one, and a
revision that drops `applyHex` usually drops the feature with it. So both are collected from the
current version and must be found again in the revised one.

Ids come from checker *selector* strings only. A checker such as
`document.querySelector('#hex-value').textContent === '#FF0000'` uses the id `hex-value`; the
`'#FF0000'` it compares with is data, not a selector, and must not become a protected "id".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bs4 import BeautifulSoup

from ._models import ContractResult

_STRING = re.compile(r"""(?P<quote>['"`])(?P<body>(?:\\.|(?!(?P=quote)).)*)(?P=quote)""", re.DOTALL)
_SELECTOR_CALL = re.compile(
    r"(?:querySelector(?:All)?|closest|matches|getElementById|\$\$?)\s*\(\s*$"
)
_GET_BY_ID = re.compile(r"getElementById\s*\(\s*$")
_COMPARISON_BEFORE = re.compile(r"(?:===?|!==?|\b(?:includes|startsWith|endsWith|indexOf|test|match)\s*\()\s*$")
_COMPARISON_AFTER = re.compile(r"^\s*(?:===?|!==?)")
_ID_IN_SELECTOR = re.compile(r"#(-?[A-Za-z_][\w-]*)")
_ID_ATTRIBUTE = re.compile(r"""\[\s*id\s*[\^$*~|]?=\s*['"]?([\w-]+)['"]?\s*\]""")
_HEX_COLOUR = re.compile(r"^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_SELECTOR_SHAPE = re.compile(r"^[\w\s#.\-\[\]=\"'>:+~*,()^$|]+$")

# Named function definitions in scripts.
_FUNCTION_PATTERNS = (
    re.compile(r"\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("),
    re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"),
    re.compile(r"(?:^|[;{}\s])(?:window\.)?([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>)"),
)
_RESERVED = {"if", "for", "while", "switch", "catch", "function", "return", "typeof", "new"}


def checker_ids(checker: str) -> list[str]:
    """Ids a checker reads through selectors, in order of first use."""
    found: list[str] = []
    for match in _STRING.finditer(checker):
        body, before, after = match.group("body"), checker[: match.start()], checker[match.end():]
        if _GET_BY_ID.search(before):
            if re.fullmatch(r"[\w-]+", body):
                found.append(body)
            continue
        quote = match.group("quote")
        if quote == "`" and "${" in body:
            body, continued = body.split("${", 1)[0], True  # only the literal head is visible
        else:
            continued = re.match(r"\s*\+", after) is not None
        if not _is_selector_literal(body, before, after):
            continue
        for id_match in _ID_IN_SELECTOR.finditer(body):
            # `'#track-' + t`: an id running into a concatenation is only a prefix.
            if not (continued and id_match.end() == len(body)):
                found.append(id_match.group(1))
        found += _ID_ATTRIBUTE.findall(body)
    return list(dict.fromkeys(found))


def _is_selector_literal(body: str, before: str, after: str) -> bool:
    if "#" not in body and "[id" not in body.replace(" ", ""):
        return False
    if _SELECTOR_CALL.search(before):
        return True
    if _COMPARISON_BEFORE.search(before) or _COMPARISON_AFTER.search(after):
        return False  # compared against: it is data (a hex colour, a label), not a selector
    if _HEX_COLOUR.match(body.strip()):
        return False
    # Passed to a helper (`v('#r-slider')`) or stored in a variable: looks like a selector.
    return bool(_SELECTOR_SHAPE.match(body.strip()))


def protected_ids(checkers: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """Every id named by `checkers`, plus `extra`, without duplicates, in order."""
    return list(dict.fromkeys([*(i for checker in checkers for i in checker_ids(checker)), *extra]))


def named_functions(html: str) -> list[str]:
    """Names of the functions an app's inline scripts define, in source order."""
    names: list[str] = []
    for script in _scripts(html):
        code = _strip_comments(script)
        hits = [(m.start(1), m.group(1)) for pattern in _FUNCTION_PATTERNS for m in pattern.finditer(code)]
        names += [name for _, name in sorted(hits) if name not in _RESERVED]
    return list(dict.fromkeys(names))


def element_ids(html: str) -> set[str]:
    """Ids of elements present in the markup itself."""
    soup = BeautifulSoup(html, "html.parser")
    return {str(tag["id"]) for tag in soup.find_all(id=True)}


def id_in_source(html: str, element_id: str) -> bool:
    """True when the id occurs as a whole token anywhere in the file (markup or script)."""
    return re.search(rf"(?<![\w-]){re.escape(element_id)}(?![\w-])", html) is not None


def plan_contract(html: str, checkers: Iterable[str], extra_ids: Iterable[str] = ()) -> ContractResult:
    """What the current version promises: protected ids and functions, and ids we cannot check.

    An id counts as protected when the current version has an element with it or spells it out
    in its source; an id that only appears at run time from computed strings (`'habit-' + slug`)
    cannot be checked in the source and is listed as unchecked instead.
    """
    wanted = protected_ids(checkers, extra_ids)
    present = element_ids(html)
    protected = [i for i in wanted if i in present or id_in_source(html, i)]
    unchecked = [i for i in wanted if i not in protected]
    return ContractResult(protected_ids=protected, protected_functions=named_functions(html), unchecked_ids=unchecked)


def missing_items(plan: ContractResult, old_html: str, new_html: str) -> tuple[list[str], list[str]]:
    """(missing ids, missing functions) of `new_html` against the plan made on `old_html`.

    An id that was an element id in the old markup must still be an element id (or be spelled
    out in a script, for apps that moved to rendering it); an id that only lived in scripts must
    still be spelled out somewhere.
    """
    old_elements, new_elements = element_ids(old_html), element_ids(new_html)
    missing_ids = [i for i in plan.protected_ids if not (
        i in new_elements
        or (i in old_elements and _id_created_by_script(new_html, i))
        or (i not in old_elements and id_in_source(new_html, i))
    )]
    functions = set(named_functions(new_html))
    missing_functions = [name for name in plan.protected_functions if name not in functions]
    return missing_ids, missing_functions


def _id_created_by_script(html: str, element_id: str) -> bool:
    """True when a script assigns the id (`el.id = 'x'`, `id="x"` in markup strings, setAttribute),
    not merely reads it (`getElementById('x')`)."""
    name = re.escape(element_id)
    assigns = re.compile(
        rf"""\bid\s*[=:]\s*\\?['"`]{name}\\?['"`]|setAttribute\(\s*['"]id['"]\s*,\s*['"`]{name}['"`]"""
    )
    return any(assigns.search(script) for script in _scripts(html))


def _scripts(html: str) -> list[str]:
    soup = BeautifulSoup(html, "html.parser")
    return [
        script.string or script.get_text()
        for script in soup.find_all("script")
        if not script.get("src") and not script.has_attr("data-aui") and (script.get("type") or "text/javascript").lower()
        in ("text/javascript", "module", "application/javascript", "")
    ]


def _strip_comments(code: str) -> str:
    # Good enough for finding definitions: string contents rarely look like `function f(`.
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.DOTALL)
    return re.sub(r"(?<![:\\'\"])//[^\n]*", " ", code)
