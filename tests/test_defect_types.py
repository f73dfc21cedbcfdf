"""Every GUI defect type of the one table (`cua.DEFECT_TAXONOMY`) has its part in every folder that uses it.

A type is a row of the table (name, kind, definition); its other parts are written where their
role is: perturb's design that injects it (CSS on the bound element's marker, a branch of the
defect script, or both) and the offline detector's rule that answers it. These tests fail when a
row lacks one of those parts, or a part names a type the table lacks — instead of a count of the
types kept in step by hand. They read public names only; the script and the rules are read as text.
"""

from __future__ import annotations

import ast
import inspect
import re

from commenter.detector import DEFINITIONS, DETECTION_SCHEMA, judge, system_prompt
from cua import DEFECT_TAXONOMY, DEFECT_TYPES
from perturb import DEFECTS, defect_transform, defect_types, make_defect

NAMES = [defect.name for defect in DEFECT_TAXONOMY]
_TYPE_NAME = r"[a-z]+(?:-[a-z]+)*"
# The defect script's branches: `defect.type === '<type>'`, and the keys of its table of text changes
# (`'<type>': el => …` or `'<type>'(el) {`) — a quoted name opening a line.
_SCRIPT_BRANCH = re.compile(rf"defect\.type === '({_TYPE_NAME})'|^\s*'({_TYPE_NAME})'\s*[:(]", re.MULTILINE)


def script_branches(script: str) -> set[str]:
    """The defect types the defect script has a branch for."""
    return {found for match in _SCRIPT_BRANCH.finditer(script) for found in match.groups() if found}


def rule_answers(source: str) -> set[str]:
    """The defect types a rule module can answer: the type of every `return "<type>", evidence` in it."""
    answers = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts:
            first = node.value.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                answers.add(first.value)
    return answers


def test_the_table_names_each_type_once_with_a_definition():
    assert len(set(NAMES)) == len(NAMES)
    assert all(defect.definition.strip() for defect in DEFECT_TAXONOMY)
    assert list(DEFECT_TYPES.items()) == [(defect.name, defect.kind) for defect in DEFECT_TAXONOMY]


def test_perturb_designs_every_type_of_the_table_and_no_other():
    assert defect_types() == NAMES  # in the table's order
    assert set(DEFECTS.names()) == set(NAMES)


def test_every_design_injects_its_type_by_css_or_a_branch_of_the_defect_script():
    transforms = {name: defect_transform(make_defect(name, "#bound", seed=0)) for name in NAMES}
    script = next(iter(transforms.values())).script  # the one defect script, shared by every type
    branches = script_branches(script)
    assert branches <= set(NAMES), f"the defect script has branches for types the table lacks: {branches - set(NAMES)}"
    injected_by_nothing = [name for name, transform in transforms.items()
                           if not transform.style.strip() and name not in branches]
    assert injected_by_nothing == []


def test_the_detector_is_told_every_type_with_its_definition_and_no_other():
    assert list(DEFINITIONS.items()) == [(defect.name, defect.definition) for defect in DEFECT_TAXONOMY]
    assert DETECTION_SCHEMA["properties"]["type"]["enum"] == [*NAMES, None]
    prompt = system_prompt(1280, 720)
    assert all(f"- {defect.name} ({defect.kind}): {defect.definition}\n" in prompt for defect in DEFECT_TAXONOMY)


def test_the_offline_detector_has_a_rule_for_every_type_and_no_other():
    assert rule_answers(inspect.getsource(inspect.getmodule(judge))) == set(NAMES)
