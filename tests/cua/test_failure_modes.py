"""Failure modes read off a trajectory (OpenApps'): each from a record built to show it, and not from one that does not."""

from __future__ import annotations

from cua import Action, BlockedRequest, ElementInfo, Point, Step, TerminationReason, Trajectory, failure_modes


def click(x: float, y: float) -> Action:
    return Action(kind="click", point=Point(x=x, y=y))


def trajectory(actions: list[Action], termination=TerminationReason.success, success: bool = True, **fields) -> Trajectory:
    steps = [Step(index=i + 1, screen_action=a, at_s=1.0 + i) for i, a in enumerate(actions)]
    return Trajectory(app_id="a", task_id="t", task="do it", policy="scripted", steps=steps, termination=termination,
                      success=success, **fields)


def test_a_clean_success_shows_no_failure_mode():
    assert failure_modes(trajectory([click(10, 10), click(20, 20)])) == []


def test_the_same_action_three_times_in_a_row_is_a_loop_but_twice_or_waiting_is_not():
    assert "action_loop" in failure_modes(trajectory([click(10, 10)] * 3, TerminationReason.stuck, False))
    assert "action_loop" in failure_modes(trajectory([click(10.2, 10.4), click(10, 10), click(9.8, 10.1)]))
    assert "action_loop" not in failure_modes(trajectory([click(10, 10), click(10, 10), click(30, 10), click(10, 10)]))
    assert "action_loop" not in failure_modes(trajectory([Action(kind="wait")] * 4))


def test_terminations_map_to_their_modes():
    assert failure_modes(trajectory([click(1, 1)], TerminationReason.stuck, False)) == ["stuck"]
    assert failure_modes(trajectory([click(1, 1)], TerminationReason.max_steps, False)) == ["max_steps"]
    assert failure_modes(trajectory([Action(kind="finished")], TerminationReason.finished, False)) == ["finished_early"]
    assert failure_modes(trajectory([click(1, 1)], TerminationReason.invalid, False)) == ["invalid_action"]
    rejected = trajectory([click(1, 1)])
    rejected.steps[0].invalid_replies = ["click(start_box='(9999,9999)')"]
    assert failure_modes(rejected) == ["invalid_action"]


def test_acting_on_an_injected_decoy_is_its_own_mode_and_on_a_banner_is_not():
    decoyed = trajectory([click(5, 5)])
    decoyed.steps[0].target = ElementInfo(tag="button", text="Finish task", injected="decoy")
    assert failure_modes(decoyed) == ["decoy"]
    bannered = trajectory([click(5, 5)])
    bannered.steps[0].target = ElementInfo(tag="div", text="Notice", injected="banner")
    assert failure_modes(bannered) == []


def test_leaving_the_app_counts_requests_the_agent_caused_not_the_apps_own():
    def blocked(url: str, at_s: float, kind: str = "fetch") -> BlockedRequest:
        return BlockedRequest(url=url, resource_type=kind, at_s=at_s)

    own = trajectory([click(1, 1)], blocked_requests=[blocked("https://cdn.example/x.js", 0.2, "script"),
                                                       blocked("https://cdn.example/x.js", 3.0, "script")])
    assert failure_modes(own) == []  # the app asked for it at load too: not the agent's doing
    followed = trajectory([click(1, 1)], blocked_requests=[blocked("https://elsewhere.example/", 1.5, "document")])
    assert failure_modes(followed) == ["left_app"]
    new = trajectory([click(1, 1)], blocked_requests=[blocked("https://tracker.example/ping", 1.2)])
    assert failure_modes(new) == ["left_app"]


def test_a_failed_answer_check_is_its_own_mode_as_the_caller_says():
    reached = trajectory([click(1, 1)])  # the state was reached; the answer is scored outside the trajectory
    assert failure_modes(reached) == []
    assert failure_modes(reached, answer_failed=True) == ["wrong_answer"]
