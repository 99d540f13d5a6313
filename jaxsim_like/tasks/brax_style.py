"""The ``reset(rng)`` / ``step(state, action)`` environment shape of Brax and MuJoCo Playground,
duck-typed: nothing of Brax is imported.

:class:`BraxStyleEnv` wraps a :class:`~.task.Task`; its :class:`EnvState` has the fields Brax's
wrappers and trainers read (``pipeline_state``, ``obs``, ``reward``, ``done``, ``metrics``,
``info``, and ``replace``), with ``done`` and ``reward`` as floats and ``info["truncation"]``
1.0 where the episode hit the task's horizon. Brax's trainers add their own episode limit and
automatic reset (``brax.envs.training.wrap``): give them a task built with ``horizon=0`` and
``auto_reset=False`` (:func:`for_brax`), and the episode length to the trainer
(``examples/ppo_brax.py`` trains with Brax's own PPO so).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ..pytree import pytree_dataclass
from .task import Task, TaskState


@pytree_dataclass()
class EnvState:
    """Brax's ``State`` fields: the task's :class:`~.task.TaskState` as ``pipeline_state``, the
    observation ``(O,)``, ``reward`` and ``done`` (floats), ``metrics`` and ``info`` dicts."""

    pipeline_state: TaskState
    obs: jax.Array
    reward: jax.Array
    done: jax.Array
    metrics: dict[str, jax.Array]
    info: dict[str, Any]


class BraxStyleEnv:
    """A Brax-style environment over ``task`` (its own automatic reset and horizon apply)."""

    def __init__(self, task: Task) -> None:
        self.task = task

    @property
    def observation_size(self) -> int:
        return self.task.observation_size

    @property
    def action_size(self) -> int:
        return self.task.action_size

    @property
    def unwrapped(self) -> "BraxStyleEnv":
        return self

    def _wrap(self, state: TaskState, metrics: dict[str, jax.Array], info: dict[str, Any]) -> EnvState:
        dtype = state.obs.dtype
        info = dict(info)
        info["truncation"] = state.truncated.astype(dtype)
        metrics = {**metrics, **state.metrics}
        return EnvState(state, state.obs, state.reward, state.done.astype(dtype), metrics, info)

    def reset(self, rng: jax.Array) -> EnvState:
        """A fresh episode from the raw key ``rng (2,)``."""
        return self._wrap(self.task.reset(rng), {}, {})

    def step(self, state: EnvState, action: jax.Array) -> EnvState:
        """One action ``(A,)`` in ``[-1, 1]``; the metrics and info that wrappers added to
        ``state`` are carried over (the task's metrics updated), as Brax's environments do."""
        return self._wrap(self.task.step(state.pipeline_state, jnp.asarray(action)), state.metrics, state.info)


def for_brax(task: Task) -> BraxStyleEnv:
    """``task`` without horizon and automatic reset, for Brax's trainers (which add both)."""
    return BraxStyleEnv(task.replace(horizon=0, auto_reset=False))
