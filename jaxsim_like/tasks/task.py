"""A task over the functional world: pure ``reset(key)`` and ``step(state, action)``.

A :class:`Task` is a pytree: the world (:class:`~jaxsim_like.simulation.world.WorldModel`), the
:class:`~.actions.ActionMap`, the :class:`~.randomisation.Randomisation` ranges and the task's
``settings`` (reward weights, thresholds: a dict of arrays) are traced; the number of physics
``substeps`` per action, the ``horizon`` (actions per episode before truncation; 0: none) and
the task's :class:`TaskFunctions` are static. So ``jit(vmap(task.step))`` compiles once per
task structure, and new weights, ranges or model parameters never recompile.

Each episode draws its world parameters from the key in :meth:`Task.reset` (kept in
:attr:`TaskState.sample`); :meth:`Task.step` applies the action for ``substeps`` world steps of
that world, then observes, rewards and checks termination. A world whose state stops being
finite terminates with reward 0 and a zero observation. With ``auto_reset=True`` (the default)
a finished world (terminated or truncated) restarts inside the same call: the returned state is
a fresh reset (new key, new sample) carrying the finishing step's reward, flags and metrics, the
same fixed work for every world of a batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ..pytree import pytree_dataclass
from ..simulation.world import WorldModel, WorldState, world_step
from . import randomisation as rnd
from .actions import ActionMap


class TaskState(NamedTuple):
    """One world of a task between actions: the ``world`` state, the episode's parameter
    ``sample``, the observation ``obs (O,)``, the last ``reward``, ``terminated``, ``truncated``
    and ``done`` (either), the actions taken in the episode ``steps``, the task's ``metrics``
    (a dict of scalars) and the RNG ``key`` (a raw ``uint32 (2,)`` key)."""

    world: WorldState
    sample: rnd.Sample
    obs: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    done: jax.Array
    steps: jax.Array
    metrics: dict[str, jax.Array]
    key: jax.Array


class TaskFunctions(NamedTuple):
    """What makes a task, as pure functions (``world`` is the episode's randomised world):

    - ``initial(task, world, sample, key) -> WorldState``: the episode's first state;
    - ``observe(task, world, state) -> (O,)``;
    - ``reward(task, world, previous, state, action) -> (reward, metrics)`` with ``metrics`` a
      dict of scalars (the same keys at every call);
    - ``terminated(task, world, state) -> bool``.
    """

    initial: Callable[..., WorldState]
    observe: Callable[..., jax.Array]
    reward: Callable[..., tuple[jax.Array, dict[str, jax.Array]]]
    terminated: Callable[..., jax.Array]


def _finite(state: WorldState) -> jax.Array:
    leaves = [leaf for leaf in jax.tree.leaves(state.states) if jnp.issubdtype(leaf.dtype, jnp.floating)]
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in leaves]))


def tree_where(condition: jax.Array, on_true: Any, on_false: Any) -> Any:
    """``jnp.where(condition, a, b)`` leaf by leaf over two pytrees of one structure."""
    return jax.tree.map(lambda a, b: jnp.where(condition, a, b), on_true, on_false)


@pytree_dataclass(static=["functions", "substeps", "horizon", "auto_reset", "name"])
class Task:
    """A jittable task (see the module docstring). The robot is model 0 of ``world``."""

    world: WorldModel
    actions: ActionMap
    randomisation: rnd.Randomisation
    settings: dict[str, jax.Array]
    functions: TaskFunctions
    substeps: int = 1
    horizon: int = 0
    auto_reset: bool = True
    name: str = "task"

    def __post_init__(self) -> None:
        if self.substeps < 1:
            raise ValueError(f"substeps must be at least 1, got {self.substeps}")
        if self.horizon < 0:
            raise ValueError(f"horizon must be non-negative (0: no truncation), got {self.horizon}")

    @property
    def action_size(self) -> int:
        return self.actions.size

    @property
    def observation_size(self) -> int:
        return int(jax.eval_shape(self.reset, jax.random.PRNGKey(0)).obs.shape[0])

    @property
    def control_dt(self) -> jax.Array:
        """The time [s] between actions: ``substeps * dt``."""
        return self.substeps * self.world.params.dt

    def episode_world(self, sample: rnd.Sample) -> WorldModel:
        """The world of an episode with parameter ``sample``."""
        return rnd.apply(self.world, sample)

    def reset(self, key: jax.Array) -> TaskState:
        """A fresh episode drawn from ``key``: parameters, first state and observation."""
        key, sample_key, initial_key = jax.random.split(key, 3)
        sample = self.randomisation.sample(self.world, sample_key)
        world = self.episode_world(sample)
        state = self.functions.initial(self, world, sample, initial_key)
        obs = self.functions.observe(self, world, state)
        dtype = obs.dtype
        _, metrics = jax.eval_shape(
            lambda: self.functions.reward(self, world, state, state, jnp.zeros(self.action_size, dtype))
        )
        zero, false = jnp.zeros((), dtype), jnp.zeros((), bool)
        return TaskState(
            world=state,
            sample=sample,
            obs=obs,
            reward=zero,
            terminated=false,
            truncated=false,
            done=false,
            steps=jnp.zeros((), jnp.int32),
            metrics={name: jnp.zeros(m.shape, m.dtype) for name, m in metrics.items()},
            key=key,
        )

    def transition(self, state: TaskState, action: jax.Array) -> TaskState:
        """One action from ``state`` without the automatic reset (``done`` worlds go on)."""
        world = self.episode_world(state.sample)
        inputs = (self.actions.inputs(action),) + (None,) * (len(world.models) - 1)

        def substep(current: WorldState, _: None) -> tuple[WorldState, None]:
            return world_step(world, current, inputs)[0], None

        following, _ = jax.lax.scan(substep, state.world, None, length=self.substeps)
        finite = _finite(following)
        reward, metrics = self.functions.reward(self, world, state.world, following, action)
        obs = self.functions.observe(self, world, following)
        terminated = ~finite | self.functions.terminated(self, world, following)
        steps = state.steps + 1
        truncated = ~terminated & (steps >= self.horizon) if self.horizon else jnp.zeros((), bool)
        return state._replace(
            world=following,
            obs=jnp.where(finite, obs, 0.0),
            reward=jnp.where(finite, reward, 0.0).astype(state.reward.dtype),
            terminated=terminated,
            truncated=truncated,
            done=terminated | truncated,
            steps=steps,
            metrics={name: jnp.where(finite, value, 0.0) for name, value in metrics.items()},
        )

    def step(self, state: TaskState, action: jax.Array) -> TaskState:
        """One action from ``state``; with :attr:`auto_reset`, a finished world restarts (see the
        module docstring)."""
        if not self.auto_reset:
            return self.transition(state, action)
        key, reset_key = jax.random.split(state.key)
        following = self.transition(state._replace(key=key), action)
        fresh = self.reset(reset_key)
        restarted = fresh._replace(
            reward=following.reward,
            terminated=following.terminated,
            truncated=following.truncated,
            done=following.done,
            metrics=following.metrics,
        )
        return tree_where(following.done, restarted, following)
