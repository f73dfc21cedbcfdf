"""The task proposer: LLM through the real openai client on the scripted server; offline; tasks files."""

import json
from pathlib import Path

import pytest

from apps_prompts import AppPrompt, AppSpec, Domain, Task
from apps_prompts._proposer import (
    TASKS_JSON_SCHEMA,
    OfflineTaskProposer,
    ProposerError,
    get_proposer,
    normalise_task_text,
    task_id_for,
)
from apps_prompts._proposer_files import TasksFileError, load_tasks_file, tasks_file_app_ids
from llm import CallCache, ModelClient, RetryPolicy
from llm.testing import ScriptedOpenAIServer, reply_text, scripted_registry

APP = AppSpec(id="tiny-kanban", title="Tiny Kanban", domain=Domain.app,
              prompt=AppPrompt(name="Tiny Kanban", goal="Move cards between columns.", features=["Add cards"]))


def tasks_json(*descriptions: str, category: str = "core_function", level: str = "wood") -> str:
    return json.dumps({"tasks": [{"description": d, "category": category, "expected_outcome": f"Done: {d}",
                                  "level": level, "level_rationale": "2 actions: type, press Add", "id": "model-made-id"}
                                 for d in descriptions]})


@pytest.fixture
def scripted(tmp_path):
    servers = []

    def make(replies):
        server = ScriptedOpenAIServer(replies).start()
        servers.append(server)
        client = ModelClient(scripted_registry(server), cache=CallCache(tmp_path / "cache", enabled=False),
                             retry=RetryPolicy(backoff_base_s=0.01, backoff_max_s=0.05))
        return server, client

    yield make
    for server in servers:
        server.close()


async def test_llm_proposer_returns_n_tasks_with_our_slug_ids_and_asks_with_domain_guidance(scripted):
    reply = "Here you go:\n```json\n" + tasks_json("Add a card called 'Buy milk' to To do.",
                                                     "Move 'Buy milk' to Done.", "Delete the card 'Old'.") + "\n```"
    server, client = scripted([reply_text(reply)])
    result = await get_proposer("scripted", client).propose(APP, n=3)
    assert [t.id for t in result.tasks] == ["add-a-card-called-buy-milk-to-to-do", "move-buy-milk-to-done",
                                            "delete-the-card-old"]
    assert (result.source, result.offline, result.model, result.attempts, result.repairs) == ("model", False, "scripted", 1, 0)
    sent = server.distinct_requests()[0].json["messages"][1]["content"]
    assert "Propose 3 distinct tasks" in sent and "Tiny Kanban" in sent and "create, edit, complete and delete" in sent


async def test_duplicates_by_normalised_text_are_dropped_and_a_top_up_is_asked_once(scripted):
    first = tasks_json("Add a card 'Milk'.", "add a card  MILK", "Move 'Milk' to Done.")
    second = tasks_json("Move 'Milk' to done!", "Rename 'Milk' to 'Oat milk'.")
    server, client = scripted([reply_text(first), reply_text(second)])
    result = await get_proposer("scripted", client).propose(APP, n=3)
    assert [t.description for t in result.tasks] == ["Add a card 'Milk'.", "Move 'Milk' to Done.", "Rename 'Milk' to 'Oat milk'."]
    assert result.duplicates_dropped == 2 and len(server.distinct_requests()) == 2
    top_up = server.distinct_requests()[1].json["messages"][1]["content"]
    assert "Propose 1 distinct tasks" in top_up and "Do not repeat" in top_up and "Move 'Milk' to Done." in top_up


async def test_invalid_json_gets_a_repair_turn_listing_the_schema_errors(scripted):
    bad = json.dumps({"tasks": [{"description": "Add a card 'Milk'.", "category": "chore", "expected_outcome": "ok"}]})
    server, client = scripted([reply_text(bad), reply_text(tasks_json("Add a card 'Milk'."))])
    result = await get_proposer("scripted", client).propose(APP, n=1)
    assert [t.description for t in result.tasks] == ["Add a card 'Milk'."] and result.repairs == 1
    repair = server.distinct_requests()[1].json["messages"]
    assert repair[-2]["role"] == "assistant" and "tasks/0/category" in repair[-1]["content"]


async def test_repairs_are_bounded_and_then_fail_naming_the_model_and_app(scripted):
    server, client = scripted([reply_text("no json here")] * 4)
    with pytest.raises(ProposerError, match="'scripted'.*'tiny-kanban'"):
        await get_proposer("scripted", client, max_repairs=1).propose(APP, n=2)
    assert len(server.distinct_requests()) == 2


async def test_after_the_last_repair_the_individually_valid_items_are_kept(scripted):
    mixed = json.dumps({"tasks": [{"description": "Add a card 'Milk'.", "category": "core_function", "expected_outcome": "Milk is listed",
                                   "level": "wood", "level_rationale": "2 actions: type the title, press Add"},
                                  {"description": "x", "category": "nope"}]})
    server, client = scripted([reply_text(mixed)])
    result = await get_proposer("scripted", client, max_repairs=0, top_up_rounds=0).propose(APP, n=5)
    assert [t.description for t in result.tasks] == ["Add a card 'Milk'."] and result.invalid_dropped == 1


async def test_each_proposed_task_gets_the_level_and_rationale_the_model_gave_and_the_request_spells_out_the_rule(scripted):
    reply = json.dumps({"tasks": [
        {"description": "Add a card called 'Buy milk' to To do.", "category": "core_function", "expected_outcome": "Listed",
         "level": "wood", "level_rationale": "2 actions: type the title, press Add"},
        {"description": "Move every card of To do to Done, one by one.", "category": "user_workflow",
         "expected_outcome": "To do is empty", "level": "silver", "level_rationale": "8 drags, one per card"},
    ]})
    server, client = scripted([reply_text(reply)])
    result = await get_proposer("scripted", client).propose(APP, n=2)
    assert [(t.level.value, t.level_rationale) for t in result.tasks] == [
        ("wood", "2 actions: type the title, press Add"), ("silver", "8 drags, one per card")]
    sent = server.distinct_requests()[0].json["messages"][1]["content"]
    assert "paper = 1 action, wood = 2–3, bronze = 4–6, silver = 7–10, gold = more" in sent and "level_rationale" in sent


@pytest.mark.parametrize(("item", "says"), [
    ({"level": "easy", "level_rationale": "1 click"}, "tasks/0/level"),  # the old names are not the five levels
    ({"level": "wood"}, "'level_rationale' is a required property"),
    ({"level_rationale": "1 click"}, "'level' is a required property"),
    ({"level": "wood", "level_rationale": "two lines\nof rationale"}, "tasks/0/level_rationale"),
], ids=["old-level-name", "no-rationale", "no-level", "two-line-rationale"])
async def test_a_task_without_one_of_the_five_levels_and_a_one_line_rationale_is_sent_back_for_repair(scripted, item, says):
    bad = json.dumps({"tasks": [{"description": "Add a card 'Milk'.", "category": "core_function", "expected_outcome": "ok", **item}]})
    server, client = scripted([reply_text(bad), reply_text(tasks_json("Add a card 'Milk'.", level="paper"))])
    result = await get_proposer("scripted", client).propose(APP, n=1)
    assert result.repairs == 1 and result.tasks[0].level.value == "paper"
    repair = server.distinct_requests()[1].json["messages"][-1]["content"]
    assert says in repair and "level one of paper, wood, bronze, silver, gold" in repair


async def test_the_offline_proposer_keeps_the_levels_of_the_spec_and_of_a_tasks_file(tmp_path):
    from apps_prompts import load_app

    spec = load_app("mortgage-calculator")
    result = await get_proposer("offline").propose(spec)
    assert [(t.level, t.level_rationale) for t in result.tasks] == [(t.level, t.level_rationale) for t in spec.tasks]
    assert all(t.level is not None and t.level_rationale for t in result.tasks)
    path = tmp_path / "tasks.yaml"
    path.write_text("- {id: a, description: Add Milk, expected_outcome: Listed, level: gold, level_rationale: waits}\n"
                    "- {id: b, description: Add Eggs, expected_outcome: Listed, level: hard}\n"
                    "- {id: c, description: Add Oats, expected_outcome: Listed}\n")
    tasks = (await OfflineTaskProposer(tasks_file=path).propose(APP)).tasks
    assert [(t.level and t.level.value, t.level_rationale) for t in tasks] == [("gold", "waits"), ("silver", None), (None, None)]


def test_ids_are_stable_slugs_deduplicated_and_valid():
    taken: set[str] = set()
    ids = [task_id_for(text, taken) for text in ("Add a card!", "add a card", "???")]
    assert ids == ["add-a-card", "add-a-card-2", "task"]
    assert task_id_for("Add a card!", set()) == "add-a-card"
    assert normalise_task_text("Add  a CARD: 'Milk'!") == normalise_task_text("add a card milk")


def test_the_schema_rejects_unknown_categories():
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tasks": [{"description": "Add a card", "category": "x", "expected_outcome": "y"}]}, TASKS_JSON_SCHEMA)


async def test_offline_proposer_returns_the_specs_tasks_capped_at_n():
    spec = APP.model_copy(update={"tasks": [Task(id=f"t{i}", description=f"Task {i}", expected_outcome="ok") for i in range(4)]})
    result = await get_proposer("offline").propose(spec, n=3)
    assert [t.id for t in result.tasks] == ["t0", "t1", "t2"] and result.offline and result.source == "spec"


async def test_offline_proposer_without_tasks_is_a_clear_error():
    with pytest.raises(ProposerError, match="no tasks for app 'tiny-kanban'.*tasks file"):
        await OfflineTaskProposer().propose(APP)


async def test_offline_proposer_reads_a_yaml_tasks_file_keyed_by_app(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text("tiny-kanban:\n  - {id: add-milk, description: Add Milk, expected_outcome: Milk is listed}\n"
                    "pomodoro:\n  - {id: start, description: Start, expected_outcome: Running}\n")
    result = await get_proposer("offline", tasks_file=path).propose(APP)
    assert [t.id for t in result.tasks] == ["add-milk"] and result.source == f"file:{path}"


async def test_a_tasks_file_wins_over_a_model_proposer_and_no_model_is_called(tmp_path, scripted):
    from apps_prompts._proposer import propose_tasks

    server, client = scripted([reply_text("unused")])
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{"id": "a", "description": "A", "expected_outcome": "Shown"}]}))
    tasks = await propose_tasks(APP, proposer="scripted", client=client, tasks_file=path)
    assert [t.id for t in tasks] == ["a"] and server.requests == []


def test_a_json_list_with_app_ids_is_filtered_by_app(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"app_id": "tiny-kanban", "id": "a", "description": "A", "expected_outcome": "a"},
                                {"app_id": "other", "id": "b", "description": "B", "expected_outcome": "b"}]))
    assert [t.id for t in load_tasks_file(path, "tiny-kanban")] == ["a"]


def test_duplicate_ids_in_a_tasks_file_name_the_file_and_id(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text("- {id: same, description: One, expected_outcome: ok}\n- {id: same, description: Two, expected_outcome: ok}\n")
    with pytest.raises(TasksFileError) as caught:
        load_tasks_file(path)
    assert str(path) in str(caught.value) and "duplicate task id 'same'" in str(caught.value)


def test_an_invalid_task_in_a_file_names_the_entry_and_field(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text("- {id: ok, description: One, expected_outcome: ok}\n- {id: Bad Id, description: Two, expected_outcome: ok}\n")
    with pytest.raises(TasksFileError, match=r"task 2 \('Bad Id'\): field 'id'"):
        load_tasks_file(path)


def test_missing_file_and_missing_app_are_clear_errors(tmp_path):
    with pytest.raises(TasksFileError, match="not found"):
        load_tasks_file(tmp_path / "nope.yaml")
    path = tmp_path / "tasks.yaml"
    path.write_text("a: []\nb: []\n")
    with pytest.raises(TasksFileError, match="no tasks for app 'tiny-kanban'.*a, b"):
        load_tasks_file(path, "tiny-kanban")


def test_the_apps_a_tasks_file_has_tasks_for(tmp_path):
    keyed = tmp_path / "keyed.yaml"
    keyed.write_text("pomodoro: []\nregex-lab: []\n")
    assert tasks_file_app_ids(keyed) == ["pomodoro", "regex-lab"]
    listed = tmp_path / "listed.json"
    listed.write_text(json.dumps([{"app_id": "b", "id": "x"}, {"app_id": "a", "id": "y"}, {"app_id": "b", "id": "z"}]))
    assert tasks_file_app_ids(listed) == ["b", "a"]
    for_any = tmp_path / "any.yaml"
    for_any.write_text("- {id: a, description: A, expected_outcome: a}\n")
    assert tasks_file_app_ids(for_any) == []
    assert len(tasks_file_app_ids(Path(__file__).resolve().parents[2] / "configs" / "gpt5-tasks.yaml")) == 12
    with pytest.raises(TasksFileError, match="not found"):
        tasks_file_app_ids(tmp_path / "nope.yaml")
