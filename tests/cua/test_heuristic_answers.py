"""The heuristic agent answers a task's question from the page's text (`finished(text=…)`), after doing
what the task asks first; it answers nothing, rather than a number from nowhere, when the page does not
show the answer."""

from __future__ import annotations

import pytest

from apps_prompts import AnswerCheck
from cua import RolloutConfig, TerminationReason, isolated_world, rollout
from cua.policies import get_policy
from cua.policies.heuristic._answer import Question, answer_question, split_question
from verifier import match_answer

FAST = RolloutConfig(max_steps=6, step_timeout_s=30, episode_timeout_s=90)


# ---- reading the task -------------------------------------------------------------------------


@pytest.mark.parametrize("task, instructions, question, kind", [
    ("How many items are in the cart?", "", "How many items are in the cart?", "count"),
    ('Add "Milk" to the cart. How many items are in the cart?', 'Add "Milk" to the cart.',
     "How many items are in the cart?", "count"),
    ("Set the price to 500000, then tell me the monthly payment.", "Set the price to 500000.",
     "the monthly payment.", "phrase"),
    ("What is the biggest expense", "", "What is the biggest expense", "phrase"),
    ("How much does Ben get back?", "", "How much does Ben get back?", "amount"),
    ("Could you tell me the total?", "", "the total?", "phrase"),
    ("Is dark mode on?", "", "Is dark mode on?", "yes_no"),
])
def test_a_question_is_split_from_the_instructions_before_it(task, instructions, question, kind):
    found_instructions, found = split_question(task)
    assert found_instructions == instructions
    assert found is not None and (found.text, found.kind) == (question, kind)


@pytest.mark.parametrize("task", [
    'Can you add "Milk"?',  # a polite instruction
    'Add "Who? me?" as a task',  # a question mark inside quotes
    "Find out whether I can cancel anytime — open that FAQ answer.",
    "Play a round in which you click the field three times, and read your score and accuracy when time is up.",
])
def test_instructions_without_a_question_are_left_as_they_are(task):
    assert split_question(task) == (task, None)


def test_the_questions_words_leave_out_how_it_asks():
    _, question = split_question("How many items are currently shown in the cart?")
    assert question.words == ("item", "cart")


# ---- reading the answer off the page's text ----------------------------------------------------


def ask(text: str) -> Question:
    return split_question(text)[1]


STATS = """Lisbon trip
Total spent
€568.00
Per person
€142.00
Expenses logged
3
Biggest expense
Airbnb (3 nights)
Theme: Dark
Order code 48uW7x"""


@pytest.mark.parametrize("question, answer", [
    ("How many expenses are logged?", "3"),  # a value under its label
    ("What is the total spent?", "€568.00"),
    ("How much is it per person?", "€142.00"),
    ("What is the biggest expense?", "Airbnb (3 nights)"),
    ("Which theme is it?", "Dark"),  # after the label's colon
])
def test_answers_from_a_label_and_the_value_beside_it(question, answer):
    assert answer_question(ask(question), STATS).text == answer


def test_a_count_is_never_read_from_money_a_percentage_or_digits_inside_a_code():
    text = "Cart\n$12.00 subtotal\nCart discount 15%\nCart code 48uW7x"
    found = answer_question(ask("How many items are in the cart?"), text)
    assert found.text is None and "count" in found.reason


def test_a_yes_no_question_gets_no_answer_rather_than_a_guess():
    assert answer_question(ask("Is dark mode on?"), "Dark mode\nOn").text is None


def test_fields_values_count_as_lines_of_their_own():
    found = answer_question(ask("What is the home price?"), "Home price\n$\nLoan amount\n$320,000", ["Home price: 400,000"])
    assert found.text == "400,000"


# ---- end to end --------------------------------------------------------------------------------

CART = """<!doctype html><body style="margin:0;font:16px sans-serif;padding:24px">
<header><h1>Corner Shop</h1><p>Open 9 to 17 · Order #4521</p></header>
<section><h2>Your cart</h2>
  <ul id="lines"><li>Milk — $2.00</li><li>Bread — $3.50</li></ul>
  <div class="stat"><div>Items in cart</div><div id="count">2</div></div>
  <p>Free delivery over $50</p>
</section>
<section><h2>Bananas</h2><p>$1.20 a bunch</p>
  <button id="add" style="width:160px;height:40px">Add to cart</button></section>
<script>
  document.getElementById('add').onclick = () => {
    const li = document.createElement('li'); li.textContent = 'Bananas — $1.20'; document.getElementById('lines').appendChild(li);
    const count = document.getElementById('count'); count.textContent = String(Number(count.textContent) + 1);
  };
</script></body>"""

# The same shop without a count anywhere: the items are listed, the number is not written.
NO_COUNT = CART.replace('<div class="stat"><div>Items in cart</div><div id="count">2</div></div>', "")


async def three_in_cart(page) -> bool:
    return await isolated_world(page).evaluate("document.querySelectorAll('#lines li').length >= 3")


async def test_answers_how_many_items_are_in_the_cart_from_the_page(tmp_path):
    policy = get_policy("heuristic")
    trajectory = await rollout(CART, "How many items are in the cart?", policy, None, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.finished and len(trajectory.steps) == 1
    assert trajectory.answer == "2"
    assert "Items in cart" in trajectory.steps[0].thought
    assert match_answer(trajectory.answer, AnswerCheck(expected="2", match="number")).passed


async def test_does_what_the_task_asks_first_then_answers_from_the_changed_page(tmp_path):
    config = FAST.model_copy(update={"stop_on_checker": False})
    task = "Add the bananas to the cart. How many items are in the cart now?"
    trajectory = await rollout(CART, task, get_policy("heuristic"), three_in_cart, tmp_path, config)
    assert [s.model_action.kind for s in trajectory.steps] == ["click", "finished"], [s.thought for s in trajectory.steps]
    assert trajectory.steps[0].target.id == "add"
    assert trajectory.checker_ever_passed and trajectory.success
    assert trajectory.answer == "3"


async def test_a_page_that_does_not_show_the_number_gets_no_answer_not_a_guess(tmp_path):
    trajectory = await rollout(NO_COUNT, "How many items are in the cart?", get_policy("heuristic"), None, tmp_path, FAST)
    assert trajectory.termination == TerminationReason.finished
    assert trajectory.answer is None  # not 2 (counting rows is beyond it), nor 9, 17, 4521 or 50 from elsewhere
    assert "cannot answer" in trajectory.steps[-1].thought
    assert not match_answer(trajectory.answer, AnswerCheck(expected="2", match="number")).passed


async def test_a_task_without_a_question_still_finishes_without_an_answer(tmp_path):
    trajectory = await rollout(CART, "Add the bananas to the cart", get_policy("heuristic"), three_in_cart, tmp_path, FAST)
    assert trajectory.success and trajectory.answer is None
