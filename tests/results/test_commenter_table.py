"""Table 5's shape: one row per commenter mode, SR (FC) pooled over its tracks, tokens from the ledger."""

from results import AppRoundResult, TaskOutcome, by_commenter_mode_table, table_rows


def _round(coder: str, cua: str, commenter_mode: str | None, round_: int, successes: int, valid: int, tasks: int = 4,
           mode: str = "integrated") -> AppRoundResult:
    outcomes = [TaskOutcome(task_id=f"t{i}", solvable=i < valid, checker_valid=i < valid, success=i < successes)
                for i in range(tasks)]
    return AppRoundResult(app_id="app", domain="app", coder=coder, cua=cua, mode=mode, commenter_mode=commenter_mode,
                          round=round_, html="", html_sha="", tasks=outcomes)


def _usage(**by_mode: tuple[int, int]) -> dict:
    """What `flows._finish.usage_summary` makes of a ledger whose commenter called under `commenter:<mode>`."""
    modes = {mode.replace("_", "-"): {"calls": 1, "prompt_tokens": p, "completion_tokens": c} for mode, (p, c) in by_mode.items()}
    commenter = {key: sum(entry[key] for entry in modes.values()) for key in ("calls", "prompt_tokens", "completion_tokens")}
    return {"by_role": {"commenter": commenter, "coder": {"calls": 3, "prompt_tokens": 900, "completion_tokens": 900}},
            "by_commenter_mode": modes}


def test_tracks_sharing_a_commenter_mode_share_one_row_and_the_rows_tokens_add_up_to_the_ledger():
    results = [
        # two tracks with the dashboard commenter (two CUAs), their rounds 0 and 1: only the last round counts
        _round("gpt-5", "uitars", "dashboard", 0, successes=0, valid=4),
        _round("gpt-5", "uitars", "dashboard", 1, successes=2, valid=4),
        _round("gpt-5", "openai-cua", "dashboard", 0, successes=0, valid=4),
        _round("gpt-5", "openai-cua", "dashboard", 1, successes=3, valid=3),
        _round("gpt-5", "uitars", "text-only", 0, successes=0, valid=4),
        _round("gpt-5", "uitars", "text-only", 1, successes=1, valid=2),
        _round("gpt-5", "uitars", None, 1, successes=4, valid=4, mode="unsupported"),  # does not comment: no row
    ]
    usage = _usage(dashboard=(12_000, 3_000), text_only=(4_000, 1_500))
    table = by_commenter_mode_table(table_rows(results), usage)
    assert [(row["commenter"], row["tracks"], row["round"], row["tasks"]) for row in table] == [
        ("dashboard", 2, 1, 8), ("text-only", 1, 1, 4)]
    dashboard, text_only = table
    assert dashboard["SR (FC)"] == "62.5 (87.5)"  # (2 + 3) / 8 successes, (4 + 3) / 8 valid checkers
    assert text_only["SR (FC)"] == "25.0 (50.0)"
    assert (dashboard["tokens"], text_only["tokens"]) == (15_000, 5_500)
    assert dashboard["tokens (K)"] == 15.0 and text_only["tokens (K)"] == 5.5
    ledger = usage["by_role"]["commenter"]
    assert sum(row["tokens"] for row in table) == ledger["prompt_tokens"] + ledger["completion_tokens"]


def test_a_mode_with_tokens_but_no_track_row_keeps_its_tokens():
    results = [_round("offline", "heuristic", "dashboard", 0, successes=1, valid=4)]
    usage = _usage(dashboard=(100, 50), screenshots_only=(70, 30))
    table = by_commenter_mode_table(table_rows(results), usage)
    assert [(row["commenter"], row["SR (FC)"], row["tokens"]) for row in table] == [
        ("dashboard", "25.0 (100.0)", 150), ("screenshots-only", "– (–)", 100)]
    assert sum(row["tokens"] for row in table) == 250


def test_offline_commenters_use_no_tokens():
    results = [_round("offline", "heuristic", "dashboard", 0, successes=1, valid=4),
               _round("offline", "uitars", "dashboard", 0, successes=2, valid=4)]
    (row,) = by_commenter_mode_table(table_rows(results), {})
    assert row["tracks"] == 2 and row["tokens"] == 0 and row["SR (FC)"] == "37.5 (100.0)"
