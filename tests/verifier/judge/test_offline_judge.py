"""The offline judge: right where the final page shows the outcome's facts, and wrong where it should be."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cua import Trajectory
from verifier.judge import SUCCESS_SHARE, OfflineJudge, agreement_report, check_facts, judge_run, outcome_facts, run_trajectories
from verifier.judge._offline import decide
from tests.verifier.judge.conftest import make_run

RATE = 'The rate shows "5.00%" and the monthly payment reads "$1,717.83".'


async def _judge(tmp_path, expected_outcome: str, final_text: str | None, success: bool = False):
    run_dir = make_run(tmp_path, [{"task_id": "t", "expected_outcome": expected_outcome, "final_text": final_text,
                                   "success": success}])
    [ref] = run_trajectories(run_dir)
    return await OfflineJudge().judge(ref, run_dir)


def test_facts_are_quoted_strings_and_the_numbers_outside_them():
    facts = outcome_facts('50 appears in "Your tries" and the tries left drop from 7 to 6; range 1–50, -3 and 1,200.5')
    assert facts.quotes == ["Your tries"]
    assert [text for text, _ in facts.numbers] == ["50", "7", "6", "1", "-3", "1,200.5"]  # 50 once; 1–50 is 1 and 50
    assert [value for _, value in facts.numbers][-1] == Decimal("1200.5")
    assert outcome_facts(RATE).numbers == []  # 5.00 and 1,717.83 belong to their quotes
    assert outcome_facts("It's the user's 'Bank' entry").quotes == ["Bank"]  # apostrophes are not quotes


def test_numbers_match_by_value_and_quotes_by_normalised_text():
    check = check_facts('Rate 5.00%, total 1,200 and "Easy · 12 Cards"', "rate: 5 %\nTOTAL 1200.00\neasy  ·  12 cards")
    assert check.kind == "facts" and check.missing == [] and check.share == 1.0
    assert check_facts("The count is 12", "The count is 120").missing == ["12"]  # 120 is not 12


async def test_right_on_a_success_the_facts_are_on_the_final_page(tmp_path):
    judgement = await _judge(tmp_path, RATE, "Interest rate\n5.00%\nMONTHLY PAYMENT\n$1,717.83", success=True)
    assert judgement.success is True and judgement.offline and judgement.judge == "offline"
    assert judgement.confidence == pytest.approx(0.5 + 0.5 * 1.0 * 2 / 3, abs=1e-3)  # two facts of two
    assert '"5.00%"' in judgement.reason and "2/2 facts" in judgement.reason and judgement.error is None


async def test_right_on_a_failure_the_facts_are_missing(tmp_path):
    judgement = await _judge(tmp_path, RATE, "Interest rate\n6.50%\nMONTHLY PAYMENT\n$2,022.62")
    assert judgement.success is False and judgement.confidence == pytest.approx(0.833, abs=1e-3)
    assert "0/2 facts" in judgement.reason and "missing" in judgement.reason


async def test_wrong_when_the_numbers_are_on_the_page_for_another_reason(tmp_path):
    # The agent never changed the rate; the page's help text happens to quote the expected figures.
    page = "Interest rate\n6.50%\nMONTHLY PAYMENT\n$2,022.62\nExample: at 5.00% a $320,000 loan costs $1,717.83 a month."
    judgement = await _judge(tmp_path, RATE, page, success=False)
    assert judgement.success is True  # wrong: the checker says failure


async def test_wrong_when_the_page_words_the_outcome_differently(tmp_path):
    # The task was done, but the page writes an arrow where the outcome quotes an equals sign.
    judgement = await _judge(tmp_path, 'The saved list contains "2.5 kg = 5.512 lb".', "Saved\n2.5 kg → 5.512 lb", success=True)
    assert judgement.success is False  # wrong: the checker says success


async def test_an_outcome_without_facts_falls_back_to_content_words_with_less_confidence(tmp_path):
    judgement = await _judge(tmp_path, "The saved conversions list is empty.", "Saved conversions\nThe list is empty")
    assert judgement.success is True and "content words" in judgement.reason
    assert 0.5 < judgement.confidence <= 0.75
    nothing = await _judge(tmp_path / "b", "It is so.", "anything")
    assert nothing.success is None and "names nothing the offline judge can look for" in nothing.error


async def test_a_trajectory_without_final_text_is_an_error_never_a_guess(tmp_path):
    judgement = await _judge(tmp_path, RATE, None)
    assert judgement.success is None
    assert "has no final_text" in judgement.error and "re-run the rollout" in judgement.error


def test_the_threshold_is_three_quarters_of_the_facts():
    three_of_four = check_facts('"a1" "b2" "c3" "d4"', "a1 b2 c3")
    two_of_four = check_facts('"a1" "b2" "c3" "d4"', "a1 b2")
    assert SUCCESS_SHARE == 0.75 and three_of_four.share == 0.75 and two_of_four.share == 0.5


async def test_judge_run_offline_on_a_real_run_needs_no_model_and_is_cached(real_run):
    judgements = await judge_run(real_run)  # offline is the default judge
    by_task = {j.task_id: j for j in judgements}
    assert set(by_task) == {"miles-to-km", "swap-to-feet-metres", "below-absolute-zero"}
    assert all(j.offline and j.judge == "offline" and j.mode == "screenshot" for j in judgements)
    for ref in run_trajectories(real_run):
        trajectory = Trajectory.load(real_run / ref.trajectory_id)
        assert trajectory.final_text  # every real rollout kept its final page's text
        expected = decide(check_facts(trajectory.expected_outcome, trajectory.final_text))
        assert (by_task[ref.task_id].success, by_task[ref.task_id].confidence) == expected
    lines = (real_run / "judgements.jsonl").read_text().splitlines()
    assert len(lines) == 3
    assert [j.model_dump() for j in await judge_run(real_run)] == [j.model_dump() for j in judgements]
    assert len((real_run / "judgements.jsonl").read_text().splitlines()) == 3  # cached: nothing appended
    with pytest.raises(ValueError, match="the offline judge reads the final page's text only"):
        await judge_run(real_run, mode="flow")


async def test_the_agreement_report_compares_the_offline_judge_with_the_checker(real_run):
    judgements = await judge_run(real_run)
    report = agreement_report(real_run)
    [pair] = [p for p in report.pairs if {p.reference, p.other} == {"checker", "offline judge (screenshot)"}]
    agreed = sum(j.success == ref.checker_success for j, ref in zip(judgements, run_trajectories(real_run)))
    assert pair.n == 3 and pair.agreement == pytest.approx(agreed / 3) and report.problems == []
