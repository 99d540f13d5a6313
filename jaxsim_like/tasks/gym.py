"""Gymnasium's functional environment over a task (imports gymnasium: the ``gym`` extra).

:class:`TaskFuncEnv` is a ``gymnasium.experimental.functional.FuncEnv`` whose state is the
task's :class:`~.task.TaskState` flattened into one array (gymnasium's
``FunctionalJaxVectorEnv`` indexes the state as an array to reset finished worlds), so that
``gymnasium.envs.functional_jax_env.FunctionalJaxEnv`` and ``FunctionalJaxVectorEnv`` run it;
gymnasium handles the resets and the episode limit (``max_episode_steps``), so the task's own
automatic reset and horizon are switched off. :func:`make_env` gives the single environment
(with numpy observations and a time limit, the form ``gymnasium.utils.env_checker.check_env``
accepts) and :func:`make_vector_env` the vectorised one.

Two behaviours of gymnasium 1.4's ``FunctionalJaxVectorEnv`` to know: it resets the worlds that
finished at the previous call (``AutoresetMode.NEXT_STEP``), and in a call where it resets any,
it builds the next state from the *previous* state of the others
(``self.state.at[to_reset].set(...)``), so those worlds do not advance in that call (their
reward is still the transition's). The task's own automatic reset (:meth:`.task.Task.step`, or
the Brax-style adapter) has neither.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.envs.functional_jax_env import FunctionalJaxEnv, FunctionalJaxVectorEnv
from gymnasium.experimental.functional import FuncEnv
from jax.flatten_util import ravel_pytree

from .task import Task, TaskState


class TaskFuncEnv(FuncEnv):
    """``FuncEnv`` of ``task``: actions in ``[-1, 1]^A``, observations ``(O,)`` unbounded."""

    def __init__(self, task: Task) -> None:
        self.task = task.replace(horizon=0, auto_reset=False)
        template = jax.eval_shape(self.task.reset, jax.random.PRNGKey(0))
        example = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), template)
        flat, self._unravel = ravel_pytree(example._replace(key=jnp.zeros((2,), template.obs.dtype)))
        self.state_size = flat.shape[0]
        dtype = np.dtype(template.obs.dtype)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, template.obs.shape, dtype)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (self.task.action_size,), dtype)
        super().__init__()
        self._initial = jax.jit(lambda key: self._ravel(self.task.reset(key)))
        self._transition = jax.jit(lambda state, action: self._ravel(self.task.step(self._unpack(state), action)))
        self._fields = jax.jit(lambda state: self._unpack(state)[2:])

    def _ravel(self, state: TaskState) -> jax.Array:
        # The key is not kept: gymnasium passes a fresh one to every call.
        return ravel_pytree(state._replace(key=jnp.zeros((2,), state.obs.dtype)))[0]

    def _unpack(self, flat: jax.Array) -> TaskState:
        state = self._unravel(flat)
        return state._replace(key=jnp.zeros((2,), jnp.uint32))

    def initial(self, rng: Any, params: Any = None) -> jax.Array:
        return self._initial(rng)

    def transition(self, state: jax.Array, action: Any, rng: Any, params: Any = None) -> jax.Array:
        return self._transition(state, jnp.asarray(action, self.action_space.dtype))

    def _read(self, state: jax.Array) -> TaskState:
        """The task state's fields from ``obs`` on (one jitted slice of the flat array)."""
        fields = self._fields(state) if state.ndim == 1 else jax.vmap(self._fields)(state)
        return TaskState(None, None, *fields)

    def observation(self, state: jax.Array, rng: Any, params: Any = None) -> jax.Array:
        return self._read(state).obs

    def reward(self, state: jax.Array, action: Any, next_state: jax.Array, rng: Any, params: Any = None) -> jax.Array:
        return self._read(next_state).reward

    def terminal(self, state: jax.Array, rng: Any, params: Any = None) -> jax.Array:
        return self._read(state).terminated

    def transition_info(self, state: jax.Array, action: Any, next_state: jax.Array, params: Any = None) -> dict:
        # FuncEnv.transform vmaps ``step_info``, not this method: batched states arrive here too.
        return dict(self._read(next_state).metrics)


def make_env(task: Task, max_episode_steps: int | None = None) -> gymnasium.Env:
    """One gymnasium environment of ``task`` with numpy observations, truncated after
    ``max_episode_steps`` actions (default: the task's horizon; 0 or None: never)."""
    from gymnasium.wrappers import JaxToNumpy, TimeLimit

    env: gymnasium.Env = JaxToNumpy(FunctionalJaxEnv(TaskFuncEnv(task)))
    steps = task.horizon if max_episode_steps is None else max_episode_steps
    return TimeLimit(env, steps) if steps else env


def make_vector_env(task: Task, num_envs: int, max_episode_steps: int | None = None) -> FunctionalJaxVectorEnv:
    """``num_envs`` worlds of ``task`` in gymnasium's ``FunctionalJaxVectorEnv`` (jax arrays),
    truncated after ``max_episode_steps`` actions (default: the task's horizon)."""
    steps = task.horizon if max_episode_steps is None else max_episode_steps
    return FunctionalJaxVectorEnv(TaskFuncEnv(task), num_envs, max_episode_steps=steps or 0)
