"""A planted corpus of checkers that are never true, or whose truth cannot be shown, on the bundled apps.

Each entry is what a verifier model might send for one bundled task: a constant-false body, an
impossible value, a selector the app never renders, a contradictory rule, a solution step on a
missing element, a solution that leaves the checker false, a state the solution cannot reach,
no solution at all, and checkers the gate rejects. Sent through the real `openai` client against
the scripted server (the repair reply scripted to stay bad), every planted task must end
`claimed` or `unsupported` — never `proven` — and the repair message must say what happened.
A second run lets the repair fix one of them, which then ends `proven`.
"""

from __future__ import annotations

from apps_prompts import load_app
from llm import ModelClient
from llm.testing import ScriptedOpenAIServer, scripted_registry
from verifier import verify_app
from verifier.testing import (
    APPS,
    CONFIG,
    PLANTED,
    UC,
    is_repair,
    planted_for,
    real,
    reference_entry,
    request_text,
    scripted_verifier,
    verify_apps,
)


def test_the_corpus_is_big_and_varied():
    assert len(PLANTED) >= 20
    assert len({p.kind for p in PLANTED}) == len(PLANTED)
    assert len({(p.app, p.task) for p in PLANTED}) == len(PLANTED)


async def test_no_planted_checker_is_proven_and_the_repair_says_what_happened(tmp_path):
    with ScriptedOpenAIServer(scripted_verifier()) as server:
        verdicts = await verify_apps(server, tmp_path)
    # each distinct request once: a call the client retried (timed out on a loaded machine) is one repair, not two
    repairs = {app: [request_text(r) for r in server.distinct_requests() if is_repair(r) and f"App: {load_app(app).title}" in request_text(r, 1)]
               for app in APPS}
    assert all(len(messages) == 1 for messages in repairs.values()), "one repair round-trip per batch"

    ended = {p.kind: verdicts[p.app].verdict(p.task).proof for p in PLANTED}
    assert ended == {p.kind: p.ends for p in PLANTED}  # so: never "proven"
    for p in PLANTED:
        verdict = verdicts[p.app].verdict(p.task)
        assert verdict.repairs == 1 and not verdict.proven, p.kind
        assert verdict.valid == (p.ends == "claimed"), p.kind
        assert verdict.proof_reason, p.kind
        assert bool(verdict.static_warnings) == p.static, (p.kind, verdict.static_warnings)
        message = repairs[p.app][0]
        section = message.split(f"- task {p.task}:", 1)[1].split("\n- task ", 1)[0]
        for fragment in p.says:
            assert fragment in section, (p.kind, fragment, section)

    # The app's other tasks (the spec's own checkers) were proven at once and never sent for repair.
    others = [(app, v) for app in APPS for v in verdicts[app].verdicts if v.task_id not in planted_for(app)]
    assert others and all(v.proof == "proven" and v.repairs == 0 for _, v in others)
    assert all(f"- task {v.task_id}:" not in repairs[app][0] for app, v in others)


async def test_a_repair_that_fixes_one_planted_checker_makes_it_proven(tmp_path):
    fixed = {"miles-to-km": reference_entry(real(UC, "miles-to-km"))}
    with ScriptedOpenAIServer(scripted_verifier(fixed)) as server:
        client = ModelClient(scripted_registry(server), cache=False)
        verdicts = await verify_app(load_app(UC), verifier="scripted", client=client, config=CONFIG)
    assert len(server.distinct_requests()) == 2
    repaired = verdicts.verdict("miles-to-km")
    assert repaired.proven and repaired.repairs == 1 and repaired.static_warnings == []
    assert repaired.checker_source == real(UC, "miles-to-km").checker
    assert any(w.startswith("first attempt: passed the gate at load, but was not proven") for w in repaired.warnings)
    still_bad = [v for v in verdicts.verdicts if v.task_id != "miles-to-km"]
    assert still_bad and not any(v.proven for v in still_bad)
    assert verdicts.function_completeness_proven == round(1 / len(verdicts.verdicts), 6)

