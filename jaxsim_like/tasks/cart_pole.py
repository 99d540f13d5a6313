"""Cart-pole swing-up: the shipped ``cart_pole`` (fixed base; cart on a +-2.4 m rail, 1 m pole
upright at ``theta = 0``), a horizontal force on the cart, the pole starting down.

Observation ``(5,)``: ``[x, cos theta, sin theta, x_dot, theta_dot]`` (m, -, -, m/s, rad/s).
Action ``(1,)``: the force on the cart, ``force_limit * a`` [N]. Reward per action, at most 1:
``u - position_cost x^2 - velocity_cost u theta_dot^2 - effort_cost a^2`` with
``u = (1 + cos theta) / 2`` (the spin is penalised near the top, where a policy that swings the
pole round and round would otherwise collect most of the reward).
Terminates when ``|x| > cart_limit`` (before the rail's end stop) or the state is not finite;
truncated at the horizon. The links do not touch the ground (the pole hangs below it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import models
from ..dynamics.state import State
from ..loading import load_model
from ..simulation.world import WorldModel, WorldState
from .actions import ActionMap
from .randomisation import Randomisation
from .task import Task, TaskFunctions


def _initial(task: Task, world: WorldModel, sample, key: jax.Array) -> WorldState:
    noise = task.settings["initial_noise"]
    dtype = world.params.dt.dtype
    u = noise * jax.random.uniform(key, (4,), dtype, -1.0, 1.0)
    q, v = jnp.array([0.0, jnp.pi], dtype) + u[:2], u[2:]
    return world.initial_state((State.build(world.models[0], joint_positions=q, joint_velocities=v),))


def _observe(task: Task, world: WorldModel, state: WorldState) -> jax.Array:
    s = state.states[0]
    x, theta = s.joint_positions
    return jnp.stack([x, jnp.cos(theta), jnp.sin(theta), s.joint_velocities[0], s.joint_velocities[1]])


def _reward(task: Task, world: WorldModel, previous: WorldState, state: WorldState, action: jax.Array):
    s, w = state.states[0], task.settings
    x, theta = s.joint_positions
    upright = 0.5 * (1.0 + jnp.cos(theta))
    reward = (
        upright
        - w["position_cost"] * x**2
        - w["velocity_cost"] * upright * s.joint_velocities[1] ** 2
        - w["effort_cost"] * jnp.sum(jnp.clip(action, -1.0, 1.0) ** 2)
    )
    return reward, {"upright": upright, "cart_position": x}


def _terminated(task: Task, world: WorldModel, state: WorldState) -> jax.Array:
    return jnp.abs(state.states[0].joint_positions[0]) > task.settings["cart_limit"]


FUNCTIONS = TaskFunctions(_initial, _observe, _reward, _terminated)


def cart_pole_swing_up(
    *,
    dt: float = 0.01,
    substeps: int = 2,
    horizon: int = 250,
    force_limit: float = 10.0,
    integrator: str = "implicit_euler",
    randomisation: Randomisation | None = None,
    auto_reset: bool = True,
) -> Task:
    """The swing-up task: physics step ``dt`` [s], ``substeps`` steps per action (50 Hz control
    by default), ``horizon`` actions (5 s), force ``force_limit`` [N] at ``a = 1``."""
    model = load_model(models.path("cart_pole"))
    world = WorldModel.build([model], dt=dt, integrator=integrator, collisions=False)
    params = world.model_params[0]
    world = world.replace(model_params=(params.replace(contact_enabled=jnp.zeros_like(params.contact_enabled)),))
    return Task(
        world=world,
        actions=ActionMap.build(model, "torque", ["slider"], scale=force_limit),
        randomisation=Randomisation.build() if randomisation is None else randomisation,
        settings={
            name: jnp.asarray(value)
            for name, value in {
                "initial_noise": 0.05,
                "position_cost": 0.01,
                "velocity_cost": 0.02,
                "effort_cost": 0.001,
                "cart_limit": 2.2,
            }.items()
        },
        functions=FUNCTIONS,
        substeps=substeps,
        horizon=horizon,
        auto_reset=auto_reset,
        name="cart_pole_swing_up",
    )
