"""The heuristic policy matches task pieces to controls: scores and plans on made-up pages."""

from cua import DEFAULT_VIEWPORT, Viewport
from cua.policies.heuristic._goals import plan_clause
from cua.policies.heuristic._match import field_score, mention_position, names_action
from cua.policies.heuristic._page import Box, Element, Option, PageView, parse_page
from cua.policies.heuristic._task import parse_task


def element(key: str, kind: str, x: float = 100, y: float = 100, **fields) -> Element:
    box = Box(x - 50, y - 15, 100, 30)
    return Element(key=key, tag="input" if kind in ("text", "number", "range") else "button", kind=kind, box=box,
                   point=(x, y), **fields)


def page(*elements: Element) -> PageView:
    return PageView(width=1280, height=720, scroll_y=0, scroll_height=720, focused_key=None, elements=list(elements))


def clause(task: str, index: int = 0):
    return parse_task(task).clauses[index]


def test_the_reader_json_becomes_elements():
    view = parse_page({
        "viewport": {"width": 1280, "height": 720}, "scroll": {"y": 0, "height": 2000}, "focused": None,
        "elements": [{"key": "body:1/button:1", "tag": "button", "kind": "button", "text": "Save",
                      "box": {"x": 10, "y": 20, "w": 80, "h": 30}, "point": {"x": 50, "y": 35}, "scroll": None}],
        "labels": [{"text": "Mon", "box": {"x": 0, "y": 0, "w": 30, "h": 12}}],
    })
    (save,) = view.elements
    assert save.name == "Save" and save.point == (50.0, 35.0) and save.reachable
    assert view.labels[0].text == "Mon" and view.scroll_height == 2000


def test_a_reading_without_a_viewport_takes_the_pages_own_size_not_a_literal():
    assert (parse_page({}).width, parse_page({}).height) == (DEFAULT_VIEWPORT.width, DEFAULT_VIEWPORT.height)
    view = parse_page({"elements": []}, Viewport.parse("1024x768"))
    assert (view.width, view.height) == (1024, 768)
    assert parse_page({"viewport": {"width": 800, "height": 600}}, Viewport.parse("1024x768")).width == 800


def test_a_number_goes_to_the_number_input_rather_than_the_slider_beside_it():
    set_tempo = clause("Set the tempo to 137 BPM.")
    value = set_tempo.values[0]
    slider = element("s", "range", before="Tempo", after="120 BPM", min=20, max=400, value="120")
    number = element("n", "number", aria_label="Tempo (BPM)", min=20, max=400, value="120")
    assert field_score(value, number, set_tempo) > field_score(value, slider, set_tempo) > 0
    out_of_range = element("o", "range", before="Tempo", min=0, max=100)
    assert field_score(value, out_of_range, set_tempo) == 0


def test_an_email_goes_to_the_email_field():
    signup = clause('Sign up as "Sam Lee" with the email "sam@lee.dev"')
    email = next(v for v in signup.values if "@" in v.text)
    name_field = element("a", "text", label="Full name")
    email_field = element("b", "text", label="Work email", type="email")
    assert field_score(email, email_field, signup) > field_score(email, name_field, signup)


def test_buttons_named_by_the_verb_or_by_every_word():
    add = clause('Add a task "Buy milk"')
    assert names_action(add, element("b", "button", text="Add task"))
    assert names_action(add, element("p", "button", text="+"))  # "+" means add
    assert not names_action(add, element("d", "button", text="Delete all"))
    short_break = clause("Switch the timer to a short break")
    assert names_action(short_break, element("t", "tab", text="Short break"))
    assert names_action(clause("Sign up for the Business plan"), element("c", "button", text="Choose Business"))


def test_drop_down_options_are_named_by_their_distinctive_part():
    options = ["Priority: Low", "Priority: High", "Priority: Critical"]
    text = 'Add a High priority card "Fix CI"'
    assert mention_position("Priority: High", text, options) is not None
    assert mention_position("Priority: Critical", text, options) is None
    assert mention_position("°C Celsius", "convert 100 °C to kelvin") is not None


def test_plan_fills_the_field_then_presses_the_forms_button():
    view = page(
        element("body:1/form:1/input:1", "text", placeholder="New task"),
        element("body:1/form:1/button:1", "button", x=300, text="Add"),
        element("body:1/div:2/button:1", "button", x=600, text="Clear all"),
    )
    goals = plan_clause(clause('Add a task "Buy milk"'), view, [])
    assert [(g.kind, g.element.key) for g in goals] == [("fill", "body:1/form:1/input:1"), ("click", "body:1/form:1/button:1")]
    assert goals[0].text == "Buy milk" and not goals[0].submit


def test_without_a_button_enter_submits_the_last_field():
    view = page(element("body:1/input:1", "text", placeholder="What needs doing?"))
    (fill,) = plan_clause(clause('Add a task "Buy milk"'), view, [])
    assert fill.kind == "fill" and fill.submit


def test_a_select_takes_the_option_the_task_names():
    priority = element("body:1/select:1", "select", label="Priority",
                       options=(Option("Low", "low", True), Option("High", "high", False)))
    goals = plan_clause(clause("Set the priority to High"), page(priority), [])
    assert [(g.kind, g.text) for g in goals] == [("choose", "High")]


def test_a_toggle_already_in_the_wanted_state_needs_nothing():
    on = element("body:1/input:1", "checkbox", label="Dark mode", state=True)
    assert plan_clause(clause("Turn on dark mode"), page(on), []) == []
    off = element("body:1/input:1", "checkbox", label="Dark mode", state=False)
    (goal,) = plan_clause(clause("Turn on dark mode"), page(off), [])
    assert goal.kind == "toggle" and goal.desired is True


def test_row_actions_stay_inside_the_named_row():
    rows = page(
        element("body:1/ul:1/li:1/button:1", "button", text="Delete", row="Buy milk Delete", row_key="body:1/ul:1/li:1"),
        element("body:1/ul:1/li:2/button:1", "button", y=140, text="Delete", row="Walk the dog Delete", row_key="body:1/ul:1/li:2"),
    )
    (goal,) = plan_clause(clause('Delete "Walk the dog"'), rows, [])
    assert goal.element.key == "body:1/ul:1/li:2/button:1"


def test_tiny_controls_are_not_seen():
    tiny = Element(key="body:1/button:1", tag="button", kind="button", text="Export", box=Box(0, 0, 6, 6), point=(3, 3))
    assert plan_clause(clause("Export the data"), page(tiny), []) == []
