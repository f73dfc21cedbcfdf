"""`heuristic`: an honest offline computer-use agent with no model.

It reads what a user could see — the page's controls, their labels, values and boxes, through
the DOM in the harness's isolated world — parses the task text into clauses, matches each
clause to controls (`_goals`), and acts only through screen coordinates and keys,
like any other policy. It never reads the task's checker or expected outcome, nor the app's
JavaScript state. Deterministic: the same page and task give the same actions.

When the task asks a question ("… How many items are in the cart?"), it first does what the task
asks before it, then answers from the page's visible text with `finished(text=…)` (`_answer`),
or finishes without an answer when the page shows none.

It is a baseline, not an oracle. By construction it cannot use what only hovering reveals, it
cannot name an icon-only button, and it sets sliders by pointing (so an exact value on a
fine-grained slider is out of reach) — the agent-hostile patterns a redesign should remove.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from cua import Action, JavaScriptError, JavaScriptTimeout, Observation, Point, Policy, PolicyDecision
from ._answer import Question, answer_question, field_lines, read_text, split_question
from ._goal import Goal
from ._goals import plan_clause
from ._match import click_score, names_action
from ._page import Element, PageView, read_page
from ._task import Clause, ParsedTask, expand_lists, parse_task
from ._text import concept_set, content_words, normalize

ASSUMED_THUMB_PX = 16  # Chromium's default range thumb; styled thumbs differ, hence one corrective click
MAX_ATTEMPTS = {"fill": 4, "choose": 3, "slide": 5, "toggle": 2, "click": 1}
MAX_SLIDER_MOVES = 5  # a first click and a few corrections, as a person nudging a slider would
MAX_SCROLLS_PER_GOAL = 5
MAX_UNREADABLE_STEPS = 2
MIN_FOLLOW_UP_SCORE = 2.5
MAX_FOLLOW_UPS = 2  # "Product ▾" → "Changelog", or a confirmation: never a chain longer than this
MAX_ACTIONS_PER_CLAUSE = 12  # a clause that needs more is not going well: move on
_CONFIRM_WORDS = concept_set(content_words("confirm yes ok sure again proceed continue"))


class HeuristicPolicy(Policy):
    """Reads the DOM, matches the task's words and values to controls, acts by coordinates."""

    name = "heuristic"
    offline = True
    model = None

    def __init__(self) -> None:
        self._task: str | None = None
        self._parsed = ParsedTask(text="")
        self._question: Question | None = None
        self._clause_index = 0
        self._done: set[str] = set()
        self._attempts: Counter[str] = Counter()
        self._scrolls: Counter[str] = Counter()
        self._selected_all: set[str] = set()
        self._opened: set[str] = set()
        self._slider_moves: dict[str, list[float]] = {}
        self._last_click: _LastClick | None = None  # what the last click was, to follow up what it opened
        self._follow_ups = 0
        self._unreadable = 0
        self._clause_actions: Counter[int] = Counter()
        self._submitted: set[int] = set()
        self._typed_keys: set[str] = set()
        self._left_field = False

    @property
    def coordinate_space(self) -> str:
        return "screen"

    async def act(self, observation: Observation) -> PolicyDecision:
        if observation.page is None:
            raise RuntimeError("the heuristic policy reads the DOM: run it as an offline policy so it is given the page")
        if observation.task != self._task:
            self._start(observation.task)
        try:
            view = await read_page(observation.page)
        except (JavaScriptError, JavaScriptTimeout) as exc:
            self._unreadable += 1
            if self._unreadable > MAX_UNREADABLE_STEPS:
                return _decide(Action(kind="finished"), f"The page cannot be read ({exc}); stopping.")
            return _decide(Action(kind="wait"), f"The page cannot be read right now ({exc}); waiting.")
        self._unreadable = 0
        decision = self._follow_up(view) or self._next(view)  # a follow-up is a click, never the final answer
        if self._question is not None and decision.actions[0].kind == "finished":
            return await self._answer(observation.page, view)
        return decision

    async def _answer(self, page, view: PageView) -> PolicyDecision:
        """Finish with the answer to the task's question, read off the page (none when it shows none)."""
        question = self._question
        try:
            text = await read_text(page)
        except (JavaScriptError, JavaScriptTimeout) as exc:
            return _decide(Action(kind="finished"), f"The page cannot be read ({exc}), so I cannot answer {question.text!r}.")
        answer = answer_question(question, text, field_lines(view))
        if answer.text is None:
            return _decide(Action(kind="finished"), f"I cannot answer {question.text!r} from the page: {answer.reason}.")
        return _decide(Action(kind="finished", text=answer.text), f"Answering {question.text!r}: {answer.reason}.")

    # ---- planning ---------------------------------------------------------------------------

    def _start(self, task: str) -> None:
        self.__init__()
        self._task = task
        instructions, self._question = split_question(task)
        self._parsed = expand_lists(parse_task(instructions))

    def _next(self, view: PageView) -> PolicyDecision:
        clauses = self._parsed.clauses
        while self._clause_index < len(clauses):
            index = self._clause_index
            clause = clauses[index]
            if self._clause_actions[index] < MAX_ACTIONS_PER_CLAUSE and index not in self._submitted:
                for goal_id, goal, owner in self._agenda(index, view):
                    if goal_id in self._done:
                        continue
                    decision = self._pursue(goal_id, goal, owner, view)
                    if decision is not None:
                        self._clause_actions[index] += 1
                        if goal_id == f"{index}:commit" and decision.actions[0].kind == "click" and self._attempts[goal_id] >= clause.repeat:
                            self._submitted.add(index)  # the page after a submit is a new page: the clause is done
                        return decision
                    self._done.add(goal_id)
            self._clause_index += 1
        typed_into = view.by_key(view.focused_key) if view.focused_key in self._typed_keys else None
        if typed_into is not None and not self._left_field:
            # Many apps take a field's value on "change", which fires when the field loses focus.
            self._left_field = True
            return _decide(Action(kind="hotkey", keys=["tab"]), f"Leaving the {typed_into.describe()} (Tab) so the app takes the new value.")
        summary = "; ".join(c.text for c in clauses) or self._parsed.text
        return _decide(Action(kind="finished"), f"Nothing left to do for: {summary[:200]}")

    def _agenda(self, index: int, view: PageView) -> list[tuple[str, Goal, Clause]]:
        """The clause's goals in order; a form is completed before it is submitted.

        "Add 'Museum tickets' for 45, split only between Chloe and Dev": the second clause only
        sets choices in the same form, so it goes before the first clause's "Add" button.
        """
        clauses = self._parsed.clauses
        own = [(f"{index}:{g.id}", g, clauses[index]) for g in plan_clause(clauses[index], view, self._inherited(index))]
        following = index + 1
        if following >= len(clauses) or not clauses[following].joined:
            return own
        ahead = plan_clause(clauses[following], view, self._inherited(following))
        if not ahead or any(g.id == "open" or g.id.startswith("commit") for g in ahead):
            return own
        ahead_items = [(f"{following}:{g.id}", g, clauses[following]) for g in ahead]
        cut = next((i for i, (_, g, _) in enumerate(own) if g.id.startswith("commit")), len(own))
        return own[:cut] + ahead_items + own[cut:]

    def _inherited(self, index: int) -> list[str]:
        """The quoted things of the clauses before, for "it"/"them" ("add 'X' and tick it")."""
        earlier = ([v.text for v in clause.values if v.quoted] for clause in reversed(self._parsed.clauses[:index]))
        return next((quoted for quoted in earlier if quoted), [])

    # ---- one goal, one action ---------------------------------------------------------------

    def _pursue(self, goal_id: str, goal: Goal, clause: Clause, view: PageView) -> PolicyDecision | None:
        """The next action toward `goal`, or None when it is done (or given up)."""
        element = goal.element
        if element.point is None:
            if element.scroll is None or self._scrolls[goal_id] >= MAX_SCROLLS_PER_GOAL:
                return None  # hidden behind something or unreachable: give up on this goal
            self._scrolls[goal_id] += 1
            hint = element.scroll
            distance = abs(element.box.center_y - view.height * 0.45) if hint.direction in ("up", "down") else 400
            action = Action(kind="scroll", point=Point(x=hint.x, y=hint.y), direction=hint.direction,
                            amount=round(min(max(distance, 120), 3000)))
            return _decide(action, f"Scrolling {hint.direction} to reach the {element.describe()} ({goal.reason}).")
        limit = MAX_ATTEMPTS.get(goal.kind, 1) * max(clause.repeat if goal.id == "commit" else 1, 1)
        if self._attempts[goal_id] >= limit:
            return None
        self._attempts[goal_id] += 1
        match goal.kind:
            case "fill":
                return self._fill(goal_id, goal, element, view)
            case "choose":
                return self._choose(goal_id, goal, element)
            case "slide":
                return self._slide(goal_id, goal, element)
            case "toggle":
                if goal.desired is not None and element.state is goal.desired:
                    return None
                if self._attempts[goal_id] > 1 and element.state is None:
                    return None  # no visible state to check: one click is all we can justify
                return self._click(element, view, f"Clicking the {element.describe()} to turn it {'on' if goal.desired is not False else 'off'} ({goal.reason}).")
            case _:
                return self._click(element, view, f"Clicking the {element.describe()} ({goal.reason}).", clause if goal.id == "commit" else None)

    def _fill(self, goal_id: str, goal: Goal, element: Element, view: PageView) -> PolicyDecision | None:
        suffix = "\n" if goal.submit else ""
        if not (element.focused or view.focused_key == element.key):
            return self._click(element, view, f"Clicking the {element.describe()} to type {goal.text!r} into it ({goal.reason}).")
        if element.value.strip() == goal.text.strip():  # exact: "[A-Z]+" is not "[a-z]+"
            if not goal.submit:
                return None
            self._done.add(goal_id)
            return _decide(Action(kind="type", text="\n"), f"{goal.text!r} is in the {element.describe()}; pressing Enter to submit.")
        if element.value and goal_id not in self._selected_all:
            self._selected_all.add(goal_id)
            return _decide(Action(kind="hotkey", keys=["ctrl", "a"]), f"Selecting the old text {element.value[:30]!r} in the {element.describe()} to replace it.")
        self._done.add(goal_id)
        self._typed_keys.add(element.key)
        enter = " and pressing Enter" if goal.submit else ""
        return _decide(Action(kind="type", text=goal.text + suffix), f"Typing {goal.text!r} into the {element.describe()}{enter} ({goal.reason}).")

    def _choose(self, goal_id: str, goal: Goal, element: Element) -> PolicyDecision:
        if goal_id not in self._opened:
            self._opened.add(goal_id)
            x, y = element.point
            return _decide(Action(kind="click", point=Point(x=x, y=y)), f"Opening the {element.describe()} to pick '{goal.text}' ({goal.reason}).")
        self._done.add(goal_id)
        return _decide(Action(kind="type", text=goal.text + "\n"), f"Typing '{goal.text}' to pick it in the {element.describe()} and confirming with Enter.")

    def _slide(self, goal_id: str, goal: Goal, element: Element) -> PolicyDecision | None:
        low = element.min if element.min is not None else 0.0
        high = element.max if element.max is not None else 100.0
        if high <= low:
            return None
        box = element.box
        y = round(box.center_y)
        if goal.extreme:
            if self._attempts[goal_id] > 1:
                return None
            x = box.x + box.width - 2 if goal.extreme == "max" else box.x + 2
            return _decide(Action(kind="click", point=Point(x=round(x), y=y)),
                           f"Clicking the {goal.extreme} end of the {element.describe()} ({goal.reason}).")
        target = min(max(goal.number, low), high)
        if target in (low, high) and self._attempts[goal_id] == 1:  # an end: click past the handle's travel
            x = box.x + box.width - 2 if target == high else box.x + 2
            return _decide(Action(kind="click", point=Point(x=round(x), y=y)),
                           f"Clicking the {'right' if target == high else 'left'} end of the {element.describe()} for {target:g} ({goal.reason}).")
        action = self._slider_move(goal_id, element, target, low, high)
        if action is None:
            return None  # there, or pointing cannot land on this exact value
        how = "Clicking along" if action.kind == "click" else "Nudging the handle of"
        return _decide(action, f"{how} the {element.describe()} toward {target:g} ({goal.reason}).")

    def _slider_move(self, goal_id: str, element: Element, target: float, low: float, high: float) -> Action | None:
        """A click where `target` should be, then drags of the handle corrected by what each move
        did — what a person nudging a slider does. None: it is there, or no pixel gives the value."""
        box = element.box
        y = round(box.center_y)
        try:
            current: float | None = float(element.value)
        except ValueError:
            current = None
        moves = self._slider_moves.setdefault(goal_id, [])  # values seen before each move
        if moves and current is not None and abs(current - target) < 1e-9:
            return None
        if len(moves) >= MAX_SLIDER_MOVES or current is None or moves.count(current) >= 2:
            return None  # out of tries, or the handle keeps coming back here: the value lies between pixels
        px_per_unit = max(box.width - ASSUMED_THUMB_PX, 1.0) / (high - low)
        moves.append(current)
        if len(moves) == 1:
            x = round(box.x + ASSUMED_THUMB_PX / 2 + (target - low) * px_per_unit)
            return Action(kind="click", point=Point(x=x, y=y))
        # Clicking on the handle does not move it; dragging it does, pixel by pixel.
        handle = round(box.x + ASSUMED_THUMB_PX / 2 + (current - low) * px_per_unit)
        shift = (target - current) * px_per_unit
        stuck = 1 + (moves[-2] == current if len(moves) >= 2 else 0)  # a move that changed nothing: push harder
        shift = round(shift) if abs(shift) >= stuck else (stuck if shift > 0 else -stuck)
        return Action(kind="drag", point=Point(x=handle, y=y), end=Point(x=handle + shift, y=y))

    def _click(self, element: Element, view: PageView, thought: str, clause: Clause | None = None) -> PolicyDecision:
        x, y = element.point
        if element.kind in ("button", "link", "tab", "clickable"):
            self._last_click = _LastClick(element.key, element.name, frozenset(e.key for e in view.elements), clause)
        return _decide(Action(kind="click", point=Point(x=x, y=y)), thought)

    def _follow_up(self, view: PageView) -> PolicyDecision | None:
        """What a click opened is part of the same act: a "Click again to confirm" / "Yes, delete"
        button, or the item a menu revealed ("Product ▾" → "Changelog")."""
        last, self._last_click = self._last_click, None
        if last is None or self._follow_ups >= MAX_FOLLOW_UPS:
            return None
        best, best_score = None, MIN_FOLLOW_UP_SCORE
        for element in view.elements:
            if element.point is None or element.disabled or element.kind not in ("button", "link", "tab", "clickable"):
                continue
            changed_in_place = element.key == last.key and normalize(element.name) != normalize(last.name)
            appeared = element.key not in last.keys_before
            if (changed_in_place or appeared) and concept_set(content_words(element.name)) & _CONFIRM_WORDS:
                best, best_score = element, float("inf")
                break
            if appeared and last.clause is not None and normalize(element.name) != normalize(last.name) and names_action(last.clause, element):
                score = click_score(last.clause, element)
                if score > best_score:
                    best, best_score = element, score
        if best is None:
            self._follow_ups = 0
            return None
        self._follow_ups += 1
        what = "asks to confirm with" if best_score == float("inf") else "now shows"
        return self._click(best, view, f"The page {what} the {best.describe()}; clicking it to finish the step.", last.clause)


@dataclass(frozen=True)
class _LastClick:
    key: str
    name: str
    keys_before: frozenset[str]
    clause: Clause | None


def _decide(action: Action, thought: str) -> PolicyDecision:
    return PolicyDecision(actions=[action], raw_text=action.describe(), thought=thought)
