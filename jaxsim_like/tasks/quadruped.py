"""Quadruped walking forward: the shipped ``quadruped`` (floating base, 12 joints, 17.8 kg,
spherical feet touching the ground), joint position targets through the world's PID table.

The stance is hip 0, thigh ``STANCE_THIGH``, calf ``STANCE_CALF`` [rad] (the trunk
``STANCE_HEIGHT`` m above the ground). Action ``(12,)``: the targets ``stance + action_scale a``
[rad], tracked by a PD (``kp`` [N m/rad], ``kd`` [N m s/rad]) in the world step, within the
joints' effort limits.

Observation ``(34,)``: trunk height above the terrain [m], gravity direction in the trunk axes
(3), trunk linear and angular velocity in the trunk axes (3 + 3) [m/s, rad/s], joint positions
from the stance (12) [rad] and joint velocities (12) [rad/s]. Reward per action:
``forward_weight v_x + alive_bonus - effort_cost mean((tau / tau_max)^2)
- height_cost (h - STANCE_HEIGHT)^2`` with ``v_x`` the trunk's mean forward speed over the
action [m/s], ``tau`` the commanded torques and ``h`` the trunk's height [m] (the last term
keeps the trunk up: without it, the trained policies shuffled forward crouched). Metrics: the
forward speed [m/s], the effort, the trunk height [m] and ``feet_touching``, how many of the
four lower legs (each carrying its foot) have a collidable point in the terrain after the action.
Terminates when the trunk falls (height below ``min_height`` or its z axis tilted more than
``acos(min_upright)`` from vertical) or the state is not finite; truncated at the horizon.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import models
from ..dynamics import spatial
from ..dynamics.state import State
from ..loading import load_model
from ..simulation.step import contact_point_positions
from ..simulation.terrain import penetration
from ..simulation.world import WorldModel, WorldState
from .actions import ActionMap
from .randomisation import Randomisation, Sample
from .task import Task, TaskFunctions

STANCE_THIGH, STANCE_CALF = 0.7, -1.4
STANCE_HEIGHT = 0.325
"""[m]: the trunk origin above the ground with the feet touching it, at the stance."""
LOWER_LEGS = ("FL_calf", "FR_calf", "RL_calf", "RR_calf")
"""The links that carry the feet."""


def stance(dofs: int = 12) -> np.ndarray:
    """The stance joint positions ``(12,)`` [rad] (legs FL, FR, RL, RR; hip, thigh, calf)."""
    q = np.zeros(dofs)
    q[1::3], q[2::3] = STANCE_THIGH, STANCE_CALF
    return q


def _initial(task: Task, world: WorldModel, sample: Sample, key: jax.Array) -> WorldState:
    model = world.models[0]
    dtype = world.params.dt.dtype
    noise = task.settings["initial_noise"]
    u = noise * jax.random.uniform(key, (2, model.dofs), dtype, -1.0, 1.0)
    q, v = jnp.asarray(stance(model.dofs), dtype) + u[0], u[1]
    height = task.settings["initial_height"] + sample.terrain_height
    base = jnp.zeros(3, dtype).at[2].set(height)
    return world.initial_state((State.build(model, base_position=base, joint_positions=q, joint_velocities=v),))


def _trunk(state: WorldState):
    s = state.states[0]
    R = spatial.quaternion_to_rotation(s.base_quaternion)
    return s, R


def _height(world: WorldModel, s: State) -> jax.Array:
    terrain = world.params.terrain
    return s.base_position[2] - terrain.plane_offset / terrain.plane_normal[2]


def _feet_touching(world: WorldModel, s: State) -> jax.Array:
    """How many of the :data:`LOWER_LEGS` have a collidable point below the terrain's surface."""
    model = world.models[0]
    depth, _ = penetration(world.params.terrain, contact_point_positions(model, s))
    legs = np.array([model.link_names.index(name) for name in LOWER_LEGS])
    on_leg = np.asarray(model.point_link)[:, None] == legs[None, :]  # (P, 4), static
    return jnp.sum(jnp.any((depth > 0)[:, None] & on_leg, axis=0)).astype(depth.dtype)


def _observe(task: Task, world: WorldModel, state: WorldState) -> jax.Array:
    s, R = _trunk(state)
    gravity = R.T @ jnp.array([0.0, 0.0, -1.0], R.dtype)
    linear = R.T @ s.base_velocity[:3]
    angular = R.T @ s.base_velocity[3:]
    q0 = jnp.asarray(stance(s.joint_positions.shape[0]), R.dtype)
    return jnp.concatenate([_height(world, s)[None], gravity, linear, angular, s.joint_positions - q0, s.joint_velocities])


def _reward(task: Task, world: WorldModel, previous: WorldState, state: WorldState, action: jax.Array):
    w = task.settings
    speed = (state.states[0].base_position[0] - previous.states[0].base_position[0]) / task.control_dt
    limit = world.models[0].effort_limit
    effort = jnp.mean((state.controllers[0].command / limit) ** 2)
    height = _height(world, state.states[0])
    reward = (
        w["forward_weight"] * speed
        + w["alive_bonus"]
        - w["effort_cost"] * effort
        - w["height_cost"] * (height - STANCE_HEIGHT) ** 2
    )
    feet = _feet_touching(world, state.states[0])
    return reward, {"forward_speed": speed, "effort": effort, "height": height, "feet_touching": feet}


def _terminated(task: Task, world: WorldModel, state: WorldState) -> jax.Array:
    s, R = _trunk(state)
    return (_height(world, s) < task.settings["min_height"]) | (R[2, 2] < task.settings["min_upright"])


FUNCTIONS = TaskFunctions(_initial, _observe, _reward, _terminated)


def quadruped_walk(
    *,
    dt: float = 0.005,
    substeps: int = 4,
    horizon: int = 500,
    kp: float = 60.0,
    kd: float = 1.0,
    action_scale: float = 0.5,
    integrator: str = "implicit_euler",
    randomisation: Randomisation | None = None,
    auto_reset: bool = True,
) -> Task:
    """The walking task: physics step ``dt`` [s], ``substeps`` per action (50 Hz control by
    default), ``horizon`` actions (10 s), PD gains ``kp``, ``kd`` and ``action_scale`` [rad]."""
    model = load_model(models.path("quadruped"))
    world = WorldModel.build([model], dt=dt, integrator=integrator, collisions=False)
    return Task(
        world=world,
        actions=ActionMap.build(model, "position", scale=action_scale, offset=stance(model.dofs), gains=(kp, 0.0, kd)),
        randomisation=Randomisation.build() if randomisation is None else randomisation,
        settings={
            name: jnp.asarray(value)
            for name, value in {
                "initial_noise": 0.05,
                "initial_height": STANCE_HEIGHT + 0.01,
                "forward_weight": 1.0,
                "alive_bonus": 0.5,
                "effort_cost": 0.1,
                "height_cost": 50.0,
                "min_height": 0.15,
                "min_upright": 0.5,
            }.items()
        },
        functions=FUNCTIONS,
        substeps=substeps,
        horizon=horizon,
        auto_reset=auto_reset,
        name="quadruped_walk",
    )
