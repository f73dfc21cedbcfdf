"""Every app a Gymnasium environment (Farama's `gymnasium` 1.x): the bundled apps are registered on import.

    import gymnasium, environments
    env = gymnasium.make("aui/unit-converter-v0", task="swap-to-feet-metres")    # variation=, defect=, viewport=, max_steps=
    observation, info = env.reset(seed=7)           # {"screenshot": H×W×3 uint8, "goal": str}; the same seed, the same page
    observation, reward, terminated, truncated, info = env.step("Action: click(point='<point>640 360</point>')")
    register_apps("data/aui-gym", v0_dir="data/gpt5-apps", tasks_file="configs/gpt5-tasks.yaml")   # → their ids
    envs = gymnasium.make_vec("aui/unit-converter-v0", num_envs=4, vectorization_mode="vector_entry_point")
    envs = make_vector([("aui/unit-converter-v0", {"task": "swap-to-feet-metres"}), "aui/trip-splitter-v0"])

`step` takes an action of `action_space` (a dict: `kind` index into `KINDS`, `point`, `end`, `direction`,
`keys`, `text`, `amount`; screen pixels), a `cua.Action`, a dict in the project's JSON form, a UI-TARS reply
string or an OpenAI computer-use action item; a bad one raises `InvalidAction` (a ValueError) and the
episode goes on. Reward 1.0 on the step the task's proven checker turns true; a task whose checker is not
proven on the page served is not offered (`TaskNotOffered`). `ReferencePolicy(task.solution)` plays a task's
reference solution as a person would, through `env.unwrapped.ask` (an expert's demonstrations). The room owns
no browser logic — `cua.AppEnv` does the work on one background event loop (`shutdown()` closes its browser;
importing starts nothing).
"""

from ._apps import NAMESPACE, LoadedApp, env_id, register_apps
from ._env import AppGymEnv, TaskNotOffered
from ._loop import LoopDied, shutdown
from ._proofs import Offer
from ._reference import ReferencePolicy
from ._spaces import CHARSET, DIRECTIONS, KINDS, InvalidAction
from ._vector import AppVectorEnv, make_vector

BUNDLED_IDS: list[str] = register_apps()
"""The ids of the bundled apps, registered on import (`aui/<app-id>-v0`)."""

__all__ = [
    "BUNDLED_IDS",
    "CHARSET",
    "DIRECTIONS",
    "KINDS",
    "NAMESPACE",
    "AppGymEnv",
    "AppVectorEnv",
    "InvalidAction",
    "LoadedApp",
    "LoopDied",
    "Offer",
    "ReferencePolicy",
    "TaskNotOffered",
    "env_id",
    "make_vector",
    "register_apps",
    "shutdown",
]
