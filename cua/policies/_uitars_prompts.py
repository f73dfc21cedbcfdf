"""The prompts the `uitars` policy speaks, by name: `"official"` (default) and `"compact"`.

`official` is the computer-use template UI-TARS was trained on, byte for byte:

- UI-TARS-1.5 (`coordinate_space="uitars-1.5"`): `COMPUTER_USE_DOUBAO` of ByteDance's `ui-tars`
  package (PyPI `ui-tars` 0.5.1, `ui_tars/prompt.py`; the repository's `codes/ui_tars/prompt.py`,
  called `COMPUTER_USE` in its README): `<point>x y</point>` in smart-resized pixels.
- UI-TARS-1.0 (`coordinate_space="uitars-1.0"`): the computer template of the 1.0 release as
  OSWorld's UI-TARS agent renders it (`UITARS_USR_PROMPT_THOUGHT` with `UITARS_CALL_USR_ACTION_SPACE`,
  the run ByteDance points to for reproducing its results): `start_box='<|box_start|>(x1,y1)<|box_end|>'`
  in relative 0–1000 coordinates, with `call_user()`. The 1.0 README shows the same action space.

Both sources lay the conversation out the same way, and so does the policy under `official`: the
system message "You are a helpful assistant." (Qwen2-VL's default, which its chat template would
add anyway), the rendered template as the first user message, then per earlier step the
screenshot as a user message of its own (only for the last N steps) and the reply verbatim as an
assistant message; older steps keep only their reply.

`compact` is this project's earlier, shorter wording (a list generated from the parser's table,
a sentence on what coordinates mean, "Step k of at most n" notes), kept for comparison.

Each prompt declares the actions it offers; the policy parses replies accepting only those.
"""

from __future__ import annotations

from dataclasses import dataclass
from .._coordinates import coordinate_space as space_named
from .._parser import UITARS_ACTIONS

# UI-TARS-1.5: `COMPUTER_USE_DOUBAO`, verbatim (trailing spaces and `#Sleep` included).
COMPUTER_USE_15 = r"""You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space

click(point='<point>x1 y1</point>')
left_double(point='<point>x1 y1</point>')
right_single(point='<point>x1 y1</point>')
drag(start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>')
hotkey(key='ctrl c') # Split keys with a space and use lowercase. Also, do not use more than 3 keys in one hotkey action.
type(content='xxx') # Use escape characters \', \", and \n in content part to ensure we can parse the content in normal python string format. If you want to submit your input, use \n at the end of content. 
scroll(point='<point>x1 y1</point>', direction='down or up or right or left') # Show more information on the `direction` side.
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished(content='xxx') # Use escape characters \', \", and \n in content part to ensure we can parse the content in normal python string format.


## Note
- Use {language} in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
{instruction}
"""

# UI-TARS-1.0: `UITARS_USR_PROMPT_THOUGHT` with `UITARS_CALL_USR_ACTION_SPACE` filled in, verbatim.
COMPUTER_USE_10 = r"""You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task. 

## Output Format
```
Thought: ...
Action: ...
```

## Action Space

click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='')
type(content='') #If you want to submit your input, use "\n" at the end of `content`.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished()
call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.


## Note
- Use {language} in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
{instruction}
"""

OFFICIAL_SYSTEM = "You are a helpful assistant."

COMPACT = """You operate a web app in a browser to carry out a user's task. Each turn you get a \
screenshot of the browser window and answer with exactly one step.

Answer in this format, nothing else:
Thought: <one or two sentences: what you see that matters and what you will do next>
Action: <one action from the list below>

Actions ({coordinates}; point at the centre of what you mean):
{actions}

Rules: click a field before typing into it. In content, escape ' as \\' and a newline as \\n.
Use finished() only when the screenshot shows the task is complete. {language_note}

Task: {task}"""

# What the model's x y mean in each space the compact prompt speaks (see `cua._coordinates`).
_RELATIVE_EXTENT = space_named("uitars-1.0").model_size(1000, 1000)[0]
COORDINATE_SENTENCES = {
    "uitars-1.5": "x y are pixel coordinates in the screenshot",
    "uitars-1.0": f"x y are coordinates relative to the screenshot, 0 to {_RELATIVE_EXTENT:g} on each axis",
}

ACTION_COMMENT_COLUMN = 32  # where the meanings start, past the short calls

# The compact prompt lists the parser's table as it did before `call_user` had an entry of its own.
COMPACT_OFFERED = tuple(action.name for action in UITARS_ACTIONS if action.name != "call_user")
OFFICIAL_15_OFFERED = ("click", "left_double", "right_single", "drag", "hotkey", "type", "scroll", "wait", "finished")
OFFICIAL_10_OFFERED = (*OFFICIAL_15_OFFERED, "call_user")


def action_lines(offered: tuple[str, ...] = COMPACT_OFFERED) -> str:
    """The compact prompt's list of actions, one call per line with its meaning, from the parser's table."""
    lines = []
    for action in UITARS_ACTIONS:
        if action.name not in offered:
            continue
        call = f"{action.name}({action.arguments})"
        gap = ACTION_COMMENT_COLUMN - len(call)
        lines.append(f"{call}{' ' * (gap if gap > 1 else 3)}# {action.meaning}")
    return "\n".join(lines)


def system_prompt(task: str, coordinate_space: str = "uitars-1.5", language: str = "English") -> str:
    """The compact prompt (a system message): the task, the action list, what coordinates mean.

    Raises:
        KeyError: a space the policy does not speak.
    """
    language_note = "" if language.lower() == "english" else f"Write the Thought in {language}."
    return COMPACT.format(
        task=task, language_note=language_note, coordinates=COORDINATE_SENTENCES[coordinate_space], actions=action_lines()
    )


@dataclass(frozen=True)
class UITarsPrompt:
    """One prompt for one coordinate space: its text, the actions it offers; its name is also its conversation
    layout (`official` or `compact`, see the module docstring)."""

    name: str  # the registry name (`prompt=` option of the policy)
    coordinate_space: str
    offered: tuple[str, ...]  # canonical action names (`cua._parser.UITARS_ACTIONS`) the text lists
    template: str = ""  # the official text, with {language} and {instruction}; empty for compact

    def render(self, task: str, language: str = "English") -> str:
        """The prompt text for `task` (the first user message when official, the system message when compact)."""
        if self.name == "official":
            return self.template.format(language=language, instruction=task)
        return system_prompt(task, self.coordinate_space, language)

    def listed_calls(self) -> list[str]:
        """The action lines the text lists, as written (comments included)."""
        text = self.render("TASK")
        if self.name == "official":
            block = text.split("## Action Space", 1)[1].split("## Note", 1)[0]
        else:
            block = text.split("point at the centre of what you mean):", 1)[1].split("\n\n", 1)[0]
        return [line for line in block.strip().splitlines() if line.strip()]


PROMPTS: dict[str, dict[str, UITarsPrompt]] = {
    "official": {
        "uitars-1.5": UITarsPrompt("official", "uitars-1.5", OFFICIAL_15_OFFERED, COMPUTER_USE_15),
        "uitars-1.0": UITarsPrompt("official", "uitars-1.0", OFFICIAL_10_OFFERED, COMPUTER_USE_10),
    },
    "compact": {
        space: UITarsPrompt("compact", space, COMPACT_OFFERED) for space in COORDINATE_SENTENCES
    },
}


def prompt_for(name: str, coordinate_space: str) -> UITarsPrompt:
    """The prompt registered as `name` in the version for `coordinate_space`.

    Raises:
        ValueError: an unknown prompt name or coordinate space (the message lists the known ones).
    """
    if name not in PROMPTS:
        raise ValueError(f"unknown UI-TARS prompt {name!r}; known prompts: {', '.join(map(repr, sorted(PROMPTS)))}")
    by_space = PROMPTS[name]
    if coordinate_space not in by_space:
        known = " or ".join(repr(space) for space in by_space)
        raise ValueError(f"coordinate_space must be {known}, got {coordinate_space!r}")
    return by_space[coordinate_space]


def task_of_request(messages: list[dict]) -> str | None:
    """The task in the chat `messages` of a request the `uitars` policy made (under any of its
    prompts), or None when they are not such a request. For test doubles that play UI-TARS."""

    def text(message: dict) -> str:
        content = message.get("content")
        if isinstance(content, list):
            return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        return str(content or "")

    if len(messages) >= 2 and text(messages[0]) == OFFICIAL_SYSTEM:
        first = text(messages[1])
        if first.startswith("You are a GUI agent.") and "## User Instruction\n" in first:
            return first.rsplit("## User Instruction\n", 1)[1].removesuffix("\n")
    if messages and text(messages[0]).startswith(COMPACT.split(" to carry out", 1)[0]):
        return text(messages[0]).rsplit("Task: ", 1)[-1].strip()
    return None
