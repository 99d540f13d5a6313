"""Joint controllers as pure ``jax.numpy`` functions over an explicit controller state.

A model's controllers are configured by a *control table* ``(n, COLUMNS)``, one row per joint
(the columns are the constants below, the modes :class:`JointControlMode`): an input of the step,
which the object API writes between runs. The :class:`ControllerState` evolves with the state.

Each joint in a PID mode (position, position_interpolated, velocity) updates its PID when
``period`` seconds have passed since its last update (every physics step when the period is
shorter than the step), and holds its command in between; a joint whose PID was just reset
updates at the next step. With ``e = current - reference`` and ``dt`` the time since the last
update (the physics step at the first update):

    I <- clamp(I + i e dt, i_min, i_max)             (when i_max >= i_min)
    cmd = clamp(-p e - I - d de/dt + cmd_offset, cmd_min, cmd_max)   (when cmd_max >= cmd_min)

as ignition::math::PID computes it, except that the derivative is zero at the first update
(no kick from a stale previous error). Position-interpolated joints track a quintic (minimum
jerk) trajectory from ``START_POSITION`` at ``START_TIME`` to the position target, lasting
``DURATION`` seconds, then the target. Velocity targets are clipped to ``[VELOCITY_MIN, VELOCITY_MAX]``.
Force joints apply their force target, idle joints zero. Every command is finally clipped to
``[EFFORT_MIN, EFFORT_MAX]``.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class JointControlMode(enum.IntEnum):
    """How a joint is actuated; the values are ScenarIO's."""

    invalid = 0
    idle = 1
    force = 2
    velocity = 3
    velocity_follower_dart = 4
    position = 5
    position_interpolated = 6


(
    MODE,
    POSITION_TARGET,
    VELOCITY_TARGET,
    ACCELERATION_TARGET,
    FORCE_TARGET,
    KP,
    KI,
    KD,
    I_MIN,
    I_MAX,
    CMD_MIN,
    CMD_MAX,
    CMD_OFFSET,
    EFFORT_MIN,
    EFFORT_MAX,
    VELOCITY_MIN,
    VELOCITY_MAX,
    START_POSITION,
    START_TIME,
    DURATION,
    RESET,
) = range(21)
COLUMNS = 21
PID_COLUMNS = slice(KP, CMD_OFFSET + 1)
DEFAULT_GAINS = (1.0, 0.1, 0.01, -np.inf, np.inf, -np.inf, np.inf, 0.0)
"""ScenarIO's default joint PID: ``(p, i, d, i_min, i_max, cmd_min, cmd_max, cmd_offset)`` =
``(1, 0.1, 0.01)`` without limits."""

_IDLE = int(JointControlMode.idle)
_FORCE = int(JointControlMode.force)
_VELOCITY = int(JointControlMode.velocity)
_POSITION = int(JointControlMode.position)
_INTERPOLATED = int(JointControlMode.position_interpolated)


def default_table(effort_limit: np.ndarray, velocity_limit: np.ndarray, gains: Any = DEFAULT_GAINS) -> np.ndarray:
    """The control table ``(n, COLUMNS)`` of joints just inserted: idle, the PID ``gains``
    (:data:`DEFAULT_GAINS` order), the model's effort and velocity limits, and a pending PID reset."""
    effort = np.asarray(effort_limit, dtype=float)
    table = np.zeros((effort.size, COLUMNS))
    table[:, MODE] = _IDLE
    table[:, PID_COLUMNS] = np.asarray(gains, dtype=float)
    table[:, EFFORT_MIN], table[:, EFFORT_MAX] = -effort, effort
    velocity = np.asarray(velocity_limit, dtype=float)
    table[:, VELOCITY_MIN], table[:, VELOCITY_MAX] = -velocity, velocity
    table[:, RESET] = 1.0
    return table


class ControllerState(NamedTuple):
    """Per joint ``(n,)``: PID integral term, previous error, held command, whether the
    previous error is valid, and the time [s] of the last update (``-inf``: never)."""

    integral: jax.Array
    previous_error: jax.Array
    command: jax.Array
    has_previous: jax.Array
    last_update: jax.Array

    @staticmethod
    def zeros(dofs: int, dtype) -> ControllerState:
        zero = jnp.zeros(dofs, dtype)
        return ControllerState(zero, zero, zero, jnp.zeros(dofs, bool), jnp.full(dofs, -jnp.inf, dtype))


def reset(state: ControllerState, mask: jax.Array) -> ControllerState:
    """``state`` with the PIDs of the joints in ``mask (n,)`` reset (they update at the next step)."""
    fresh = ControllerState.zeros(mask.shape[0], state.integral.dtype)
    return jax.tree.map(lambda new, old: jnp.where(mask, new, old), fresh, state)


def minimum_jerk(start: Any, goal: Any, start_time: Any, duration: Any, time: Any, xp: Any = jnp) -> Any:
    """The quintic ``start + (goal - start)(10 s^3 - 15 s^4 + 6 s^5)``, ``s = (time - start_time) / duration``
    clipped to ``[0, 1]`` (the goal when ``duration <= 0``); ``xp`` is ``jax.numpy`` or ``numpy``."""
    positive = duration > 0
    s = xp.where(positive, xp.clip((time - start_time) / xp.where(positive, duration, 1.0), 0.0, 1.0), 1.0)
    return start + (goal - start) * s**3 * (10 - 15 * s + 6 * s**2)


def joint_commands(
    table: jax.Array,
    period: jax.Array,
    state: ControllerState,
    positions: jax.Array,
    velocities: jax.Array,
    time: jax.Array,
    dt: jax.Array,
) -> tuple[jax.Array, ControllerState]:
    """The joint torques ``(n,)`` commanded at ``time`` [s] and the next controller state.

    ``table (n, COLUMNS)``, controller ``period`` [s], joint ``positions`` and ``velocities``
    ``(n,)`` at ``time``, physics step ``dt`` [s]. Joints in velocity_follower_dart mode get
    zero here (the exact tracking is solved by the caller).
    """
    mode = table[:, MODE]
    velocity_mode = mode == _VELOCITY
    interpolated = mode == _INTERPOLATED
    pid_mode = (mode == _POSITION) | interpolated | velocity_mode

    reference = jnp.where(
        interpolated,
        minimum_jerk(table[:, START_POSITION], table[:, POSITION_TARGET], table[:, START_TIME], table[:, DURATION], time),
        table[:, POSITION_TARGET],
    )
    velocity_reference = jnp.clip(table[:, VELOCITY_TARGET], table[:, VELOCITY_MIN], table[:, VELOCITY_MAX])
    error = jnp.where(velocity_mode, velocities - velocity_reference, positions - reference)

    elapsed = time - state.last_update
    due = elapsed >= period - 0.5 * dt
    pid_dt = jnp.where(state.has_previous, elapsed, dt)
    pid_dt = jnp.where(pid_dt > 0, pid_dt, dt)
    p, i, d = table[:, KP], table[:, KI], table[:, KD]
    i_min, i_max, cmd_min, cmd_max = table[:, I_MIN], table[:, I_MAX], table[:, CMD_MIN], table[:, CMD_MAX]
    integral = state.integral + i * error * pid_dt
    integral = jnp.where(i_max >= i_min, jnp.clip(integral, i_min, i_max), integral)
    derivative = jnp.where(state.has_previous, (error - state.previous_error) / pid_dt, 0.0)
    command = -p * error - integral - d * derivative + table[:, CMD_OFFSET]
    command = jnp.where(cmd_max >= cmd_min, jnp.clip(command, cmd_min, cmd_max), command)

    update = pid_mode & due
    next_state = ControllerState(
        integral=jnp.where(update, integral, state.integral),
        previous_error=jnp.where(update, error, state.previous_error),
        command=jnp.where(update, command, state.command),
        has_previous=state.has_previous | update,
        last_update=jnp.where(update, time, state.last_update),
    )
    torques = jnp.where(pid_mode, next_state.command, jnp.where(mode == _FORCE, table[:, FORCE_TARGET], 0.0))
    return jnp.clip(torques, table[:, EFFORT_MIN], table[:, EFFORT_MAX]), next_state
