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

With an implicit step (``implicit=True``), a PID that updates every physics step (``period <=
1.5 dt``) and whose command is within its clamps is evaluated at the *end* of the step, like the
joint damping: ``cmd = -p e' - I - d (e' - e) / dt + cmd_offset`` with ``e'`` the error at the
end of the step (the reference at ``time + dt``) and ``e`` the end-of-step error of the previous
update, linear in the end-of-step state, so that stiff gains stay stable at large steps. The
integral is still advanced with the start error.
:class:`Commands` carries the command's slopes for the step to take implicitly.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import host


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
        zero = host.zeros(dofs, dtype)
        return ControllerState(zero, zero, zero, host.zeros(dofs, bool), host.to_device(np.full(dofs, -np.inf, dtype)))


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


class Commands(NamedTuple):
    """The joint ``torques (n,)`` commanded from the start-of-step state and, on the joints
    whose PID is evaluated at the end of the step (``position_end`` and ``velocity_end``, the
    position and velocity modes), its slopes ``stiffness = -d cmd / d q`` and ``damping = -d cmd
    / d q_dot`` ``(n,)`` (zero elsewhere): over a step ``dt`` the command is ``torques - dt
    stiffness q_dot' - damping (q_dot' - q_dot)``, ``q_dot'`` the end velocity."""

    torques: jax.Array
    stiffness: jax.Array
    damping: jax.Array
    position_end: jax.Array
    velocity_end: jax.Array

    @staticmethod
    def explicit(torques: jax.Array) -> "Commands":
        """``torques (n,)`` held over the step."""
        zero, false = jnp.zeros_like(torques), jnp.zeros(torques.shape, bool)
        return Commands(torques, zero, zero, false, false)

    def damped(self, damping: jax.Array, velocities: jax.Array, implicit: bool) -> "Commands":
        """These commands with the viscous ``damping (n,)`` at joint ``velocities (n,)`` added: its
        force ``-damping q_dot'`` at the end of the step (a slope) when ``implicit``, else
        ``-damping q_dot`` at its start."""
        torques = self.torques - damping * velocities
        return self._replace(torques=torques, damping=self.damping + damping) if implicit else self._replace(torques=torques)

    def limited(self, mask: jax.Array) -> "Commands":
        """These commands taken explicitly where ``mask (n,)`` is False."""
        zero = jnp.zeros_like(self.stiffness)
        return Commands(
            self.torques, jnp.where(mask, self.stiffness, zero), jnp.where(mask, self.damping, zero),
            self.position_end & mask, self.velocity_end & mask,
        )

    def settle(
        self, controller: "ControllerState", velocities: jax.Array, next_velocities: jax.Array, dt: jax.Array
    ) -> tuple[jax.Array, "ControllerState"]:
        """The command ``(n,)`` applied over a step of ``dt`` [s] from joint ``velocities`` to
        ``next_velocities``, and the controller state after it (the applied command held, the
        end-of-step error as the previous error)."""
        applied = self.torques - dt * self.stiffness * next_velocities - self.damping * (next_velocities - velocities)
        end_error = controller.previous_error + jnp.where(self.position_end, dt * next_velocities, 0.0)
        end_error = end_error + jnp.where(self.velocity_end, next_velocities - velocities, 0.0)
        return applied, controller._replace(command=controller.command + applied - self.torques, previous_error=end_error)


def joint_commands(
    table: jax.Array,
    period: jax.Array,
    state: ControllerState,
    positions: jax.Array,
    velocities: jax.Array,
    time: jax.Array,
    dt: jax.Array,
    implicit: bool = False,
) -> tuple[Commands, ControllerState]:
    """The :class:`Commands` at ``time`` [s] and the next controller state.

    ``table (n, COLUMNS)``, controller ``period`` [s], joint ``positions`` and ``velocities``
    ``(n,)`` at ``time``, physics step ``dt`` [s]; ``implicit``: evaluate the PIDs that update
    every step at the end of the step (see the module docstring). Joints in
    velocity_follower_dart mode get zero here (the exact tracking is solved by the caller). For
    the joints evaluated at the end of the step, the next state holds the start-of-step parts of
    the command and error: :meth:`Commands.settle` completes them.
    """
    mode = table[:, MODE]
    velocity_mode = mode == _VELOCITY
    interpolated = mode == _INTERPOLATED
    pid_mode = (mode == _POSITION) | interpolated | velocity_mode

    def reference_at(t):
        trajectory = minimum_jerk(table[:, START_POSITION], table[:, POSITION_TARGET], table[:, START_TIME], table[:, DURATION], t)
        return jnp.where(interpolated, trajectory, table[:, POSITION_TARGET])

    reference = reference_at(time)
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
    clamped = cmd_max >= cmd_min
    effort_min, effort_max = table[:, EFFORT_MIN], table[:, EFFORT_MAX]
    command = jnp.where(clamped, jnp.clip(command, cmd_min, cmd_max), command)

    update = pid_mode & due
    zero = jnp.zeros_like(command)
    stiffness = damping = zero
    position_end = velocity_end = jnp.zeros(command.shape, bool)
    if implicit:
        # At the end of the step the error is e' = q + dt q_dot' - r(t + dt) (position modes) or
        # q_dot' - v_ref (velocity), and the derivative (e' - e_last) / dt, e_last the end error
        # of the last update (the start error at the first: no kick).
        last = jnp.where(state.has_previous, state.previous_error, error)
        start_error = jnp.where(velocity_mode, error, positions - reference_at(time + dt))
        start = -p * start_error - integral - d * (start_error - last) / dt + table[:, CMD_OFFSET]
        start = start - jnp.where(velocity_mode, 0.0, d * velocities)
        within = (((start > cmd_min) & (start < cmd_max)) | ~clamped) & (start > effort_min) & (start < effort_max)
        end = update & within & (period <= 1.5 * dt)
        position_end, velocity_end = end & ~velocity_mode, end & velocity_mode
        command = jnp.where(end, start, command)
        error = jnp.where(end, start_error, error)
        stiffness = jnp.where(position_end, p, zero)
        damping = jnp.where(end, jnp.where(velocity_mode, p + d / dt, d), zero)
    next_state = ControllerState(
        integral=jnp.where(update, integral, state.integral),
        previous_error=jnp.where(update, error, state.previous_error),
        command=jnp.where(update, command, state.command),
        has_previous=state.has_previous | update,
        last_update=jnp.where(update, time, state.last_update),
    )
    torques = jnp.where(pid_mode, next_state.command, jnp.where(mode == _FORCE, table[:, FORCE_TARGET], 0.0))
    return Commands(jnp.clip(torques, effort_min, effort_max), stiffness, damping, position_end, velocity_end), next_state
