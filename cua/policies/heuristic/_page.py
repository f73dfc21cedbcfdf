"""What the heuristic policy sees: the page's operable elements, read from the DOM.

The reading itself is `_read_page.js`, run in the harness's isolated world so the app can
neither see nor disturb it. Nothing here touches the app's JavaScript state: only the DOM a user
could perceive (text, labels, values, boxes, lit/unlit state).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from playwright.async_api import Page

from cua import DEFAULT_VIEWPORT, Viewport, isolated_world

READ_PAGE = Path(__file__).with_name("_read_page.js").read_text(encoding="utf-8")  # a function of READ_LIMITS
# Generous caps: generated apps have a few hundred elements; a runaway page must not stall a step.
READ_LIMITS = {"maxElements": 600, "maxScan": 8000, "maxLabels": 600}
FIELD_KINDS = frozenset({"text", "number"})
INPUT_KINDS = frozenset({"text", "number", "range", "select", "checkbox", "radio", "color", "date", "time", "month", "week", "file"})


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float

    @property
    def center_x(self) -> float:
        return self.x + self.width / 2

    @property
    def center_y(self) -> float:
        return self.y + self.height / 2


@dataclass(frozen=True)
class ScrollHint:
    """Where to turn the wheel, and which way, to bring an element into view."""

    x: float
    y: float
    direction: str


@dataclass(frozen=True)
class Option:
    text: str
    value: str
    selected: bool


@dataclass(frozen=True)
class Element:
    """One control a user could operate (see `_read_page.js` for how each field is read)."""

    key: str  # structural path; stable across re-renders of the same layout
    tag: str
    kind: str  # text | number | range | select | checkbox | radio | button | link | tab | clickable | ...
    role: str = ""
    type: str = ""
    text: str = ""
    aria_label: str = ""
    label: str = ""
    placeholder: str = ""
    title: str = ""
    id_words: str = ""
    before: str = ""  # text just before it (a visual label)
    after: str = ""  # text just after it (a unit, a readout)
    heading: str = ""
    row: str = ""  # text of the repeated container (list item, row, card) it belongs to
    row_key: str = ""
    value: str = ""
    state: bool | None = None  # checked / pressed / selected / lit, when visible in the DOM
    classes: str = ""  # class names: the only sign of some custom switches' position
    first_line: str = ""  # a card's or menu item's title line ("Changelog" over "What shipped…")
    disabled: bool = False
    focused: bool = False
    box: Box = Box(0, 0, 0, 0)
    point: tuple[float, float] | None = None  # a visible point that lands on it; None if not reachable now
    scroll: ScrollHint | None = None
    options: tuple[Option, ...] = ()
    min: float | None = None
    max: float | None = None
    step: float | None = None
    group: str = ""

    @property
    def is_input(self) -> bool:
        """A form control whose visual label sits beside it rather than inside it."""
        return self.kind in INPUT_KINDS

    @property
    def name(self) -> str:
        """The name a user would call it by: its label, else its text, else its hints."""
        candidates = (self.aria_label, self.label, self.text, self.title, self.placeholder)
        return next((candidate for candidate in candidates if candidate), self.before if self.is_input else "")

    @property
    def reachable(self) -> bool:
        return self.point is not None

    def describe(self) -> str:
        """Short human description for thoughts, e.g. `button 'Add task'`."""
        name = self.name or self.after or self.row[:40]
        noun = {"text": "field", "number": "number field", "range": "slider", "select": "drop-down"}.get(self.kind, self.kind)
        return f"{noun} '{name[:50]}'" if name else noun


@dataclass(frozen=True)
class TextLabel:
    """A short visible text that is not a control, e.g. a grid's column header."""

    text: str
    box: Box


@dataclass
class PageView:
    width: int
    height: int
    scroll_y: float
    scroll_height: float
    focused_key: str | None
    elements: list[Element] = field(default_factory=list)
    labels: list[TextLabel] = field(default_factory=list)

    def by_key(self, key: str) -> Element | None:
        return next((element for element in self.elements if element.key == key), None)


def _box(raw: dict | None) -> Box:
    raw = raw or {}
    return Box(float(raw.get("x", 0)), float(raw.get("y", 0)), float(raw.get("w", 0)), float(raw.get("h", 0)))


# The reader's JSON names fields in camelCase ("ariaLabel"); every text field defaults to "".
_TEXT_FIELDS = [f.name for f in fields(Element) if f.type == "str" and f.name not in ("key", "kind", "value")]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _element(raw: dict) -> Element:
    point = raw.get("point")
    scroll = raw.get("scroll")
    return Element(
        key=raw["key"],
        kind=raw.get("kind", "clickable"),
        value=raw.get("value", "") or "",
        **{name: raw.get(_camel(name), "") for name in _TEXT_FIELDS},
        state=raw.get("state"),
        disabled=bool(raw.get("disabled")),
        focused=bool(raw.get("focused")),
        box=_box(raw.get("box")),
        point=(float(point["x"]), float(point["y"])) if point else None,
        scroll=ScrollHint(float(scroll["x"]), float(scroll["y"]), scroll["direction"]) if scroll else None,
        options=tuple(Option(o.get("text", ""), o.get("value", ""), bool(o.get("selected"))) for o in raw.get("options", [])),
        min=raw.get("min"),
        max=raw.get("max"),
        step=raw.get("step"),
    )


def parse_page(raw: dict, fallback: Viewport = DEFAULT_VIEWPORT) -> PageView:
    """Build a PageView from the reader's JSON (separate from `read_page` so tests can feed JSON).

    `fallback` gives the size when the JSON does not (`read_page` passes the page's own viewport).
    """
    viewport = raw.get("viewport", {})
    scroll = raw.get("scroll", {})
    return PageView(
        width=int(viewport.get("width", fallback.width)),
        height=int(viewport.get("height", fallback.height)),
        scroll_y=float(scroll.get("y", 0)),
        scroll_height=float(scroll.get("height", 0)),
        focused_key=raw.get("focused"),
        elements=[_element(e) for e in raw.get("elements", [])],
        labels=[TextLabel(t["text"], _box(t.get("box"))) for t in raw.get("labels", [])],
    )


async def read_page(page: Page, timeout_ms: int = 3_000) -> PageView:
    """Read the page's operable elements. Raises JavaScriptError / JavaScriptTimeout from the world."""
    raw = await isolated_world(page).call(READ_PAGE, READ_LIMITS, timeout_ms=timeout_ms)
    size = page.viewport_size
    return parse_page(raw or {}, Viewport(**size) if size else DEFAULT_VIEWPORT)
