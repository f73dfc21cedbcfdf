"""A dashboard without the checker's verdict (`hide_verdict`): what a judge of success is shown."""

from __future__ import annotations

from cua import Trajectory
from dashboard_render import first_failure_signal, render_dashboard, render_trajectory
from dashboard_render._header import result_label
from dashboard_render._tile import step_status


def test_without_the_verdict_a_success_and_a_failure_of_the_same_steps_draw_the_same_bytes(synthetic):
    # The two synthetic trajectories differ only in what the checker said (and hence how they ended).
    success, failure = synthetic(4, True), synthetic(4, False)
    assert Trajectory.load(success).success and not Trajectory.load(failure).success
    assert render_dashboard(success).png != render_dashboard(failure).png  # the ordinary dashboard tells them apart
    blind_success = render_trajectory(Trajectory.load(success), success, hide_verdict=True).png
    blind_failure = render_trajectory(Trajectory.load(failure), failure, hide_verdict=True).png
    assert blind_success == blind_failure


def test_the_ordinary_dashboard_is_unchanged_by_the_option(synthetic):
    folder = synthetic(4, True)
    trajectory = Trajectory.load(folder)
    assert render_trajectory(trajectory, folder, hide_verdict=False).png == render_dashboard(folder).png
    assert render_trajectory(trajectory, folder, hide_verdict=True).png != render_dashboard(folder).png


def test_what_the_verdict_free_parts_say(synthetic):
    trajectory = Trajectory.load(synthetic(4, True))
    last = trajectory.steps[-1]
    assert result_label(trajectory)[0] == "SUCCESS" and result_label(trajectory, hide_verdict=True)[0] == "ATTEMPT"
    assert step_status(last, trajectory, is_last=True).label == "checker passed"
    assert step_status(last, trajectory, is_last=True, hide_verdict=True).label is None
    # A success has no failure signal; without the verdict its absence would tell, so it is marked as for any attempt.
    assert first_failure_signal(trajectory) is None and first_failure_signal(trajectory, hide_verdict=True) == 3
