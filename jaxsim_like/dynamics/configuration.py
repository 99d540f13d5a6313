"""Joint positions ``(nq,)`` against joint velocities ``(n,)``: the layout of ball joints.

A ball joint has three degrees of freedom (its angular velocity ``omega`` in the child frame,
rad/s, as MuJoCo's ``qvel`` and Pinocchio's ``v``) and one unit quaternion ``Q`` (wxyz, as
MuJoCo's ``qpos``) as position, stored inline: joint ``k``'s entries of the positions follow
those of the joints before it, a scalar joint taking one and a ball joint four. Without ball
joints ``nq == n`` and every function here returns its input unchanged.

Integration on the manifold: ``Q+ = Q * exp(omega dt)`` (the rotation in the child frame),
normalised; the difference of two configurations is ``log(Q0^-1 Q1)`` for a ball joint.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import spatial

if TYPE_CHECKING:
    from .model import Model


class PositionLayout(NamedTuple):
    """Static indices: ``scalar_dofs (s,)`` the scalar degrees of freedom and ``scalar_positions
    (s,)`` their entry of the positions; ``ball_positions (b,)`` the first entry (``w``) of each
    ball joint's quaternion, in the order of ``model.ball_dofs``."""

    scalar_dofs: np.ndarray
    scalar_positions: np.ndarray
    ball_positions: np.ndarray


def position_layout(model: Model) -> PositionLayout:
    """The :class:`PositionLayout` of ``model``."""
    return _layout(model.dofs, model.ball_dofs, bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=256)
def _layout(dofs: int, ball_dofs: tuple[int, ...], x64: bool) -> PositionLayout:
    """Cached per JAX x64 mode (see :func:`.model.topology`)."""
    del x64
    in_ball = np.zeros(dofs, dtype=bool)
    for start in ball_dofs:
        in_ball[start : start + 3] = True
    # Each ball before a degree of freedom shifts its position entry by one (4 entries, 3 dofs).
    shift = np.array([sum(start < k for start in ball_dofs) for k in range(dofs)], dtype=int)
    scalar = np.flatnonzero(~in_ball)
    return PositionLayout(scalar, scalar + shift[scalar], np.array([start + shift[start] for start in ball_dofs], dtype=int))


def ball_quaternions(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``(b, 4)``: the quaternion (wxyz, as stored) of each ball joint."""
    start = position_layout(model).ball_positions
    return joint_positions[start[:, None] + np.arange(4)]


def neutral_positions(model: Model, dtype) -> jax.Array:
    """``(nq,)``: every scalar joint at zero, every ball joint at the identity quaternion."""
    q = np.zeros(model.joint_position_size)
    q[position_layout(model).ball_positions] = 1.0
    return jnp.asarray(q, dtype=dtype)


def _with_balls(model: Model, scalar_values: jax.Array, ball_values: jax.Array) -> jax.Array:
    """``(n,)`` from the values ``(s,)`` of the scalar degrees of freedom and ``(b, 3)`` of the balls."""
    layout = position_layout(model)
    order = np.empty(model.dofs, dtype=int)
    order[layout.scalar_dofs] = np.arange(len(layout.scalar_dofs))
    for b, start in enumerate(model.ball_dofs):
        order[start : start + 3] = len(layout.scalar_dofs) + 3 * b + np.arange(3)
    return jnp.concatenate([scalar_values, ball_values.reshape(-1)])[order]


def scalar_positions(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``(n,)``: each scalar joint's position [rad or m], zero for the degrees of freedom of ball joints."""
    if not model.ball_dofs:
        return joint_positions
    scalars = joint_positions[position_layout(model).scalar_positions]
    return _with_balls(model, scalars, jnp.zeros((len(model.ball_dofs), 3), joint_positions.dtype))


def dof_positions(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``(n,)``: each scalar joint's position and each ball joint's rotation vector ``log(Q)``
    [rad] (child frame; what joint springs, limits, couplings, tendons and controllers read)."""
    if not model.ball_dofs:
        return joint_positions
    scalars = joint_positions[position_layout(model).scalar_positions]
    return _with_balls(model, scalars, spatial.quaternion_log(spatial.normalize(ball_quaternions(model, joint_positions))))


def _scatter_balls(model: Model, joint_positions: jax.Array, scalar_values: jax.Array, quaternions: jax.Array) -> jax.Array:
    """``(nq,)`` with the scalar entries ``(s,)`` and the quaternions ``(b, 4)`` replaced."""
    layout = position_layout(model)
    q = joint_positions.at[layout.scalar_positions].set(scalar_values)
    return q.at[layout.ball_positions[:, None] + np.arange(4)].set(quaternions)


def _ball_velocities(model: Model, joint_velocities: jax.Array) -> jax.Array:
    """``(b, 3)``: the angular velocity of each ball joint (child frame)."""
    return joint_velocities[np.asarray(model.ball_dofs, dtype=int)[:, None] + np.arange(3)]


def integrate_positions(model: Model, joint_positions: jax.Array, joint_velocities: jax.Array, dt: jax.Array) -> jax.Array:
    """``(nq,)``: the positions after moving at constant ``joint_velocities (n,)`` for ``dt`` [s]:
    ``q + dt v`` for scalar joints, ``Q exp(omega dt)`` normalised for ball joints."""
    if not model.ball_dofs:
        return joint_positions + dt * joint_velocities
    layout = position_layout(model)
    scalars = joint_positions[layout.scalar_positions] + dt * joint_velocities[layout.scalar_dofs]
    quaternions = spatial.integrate_quaternion(
        ball_quaternions(model, joint_positions), _ball_velocities(model, joint_velocities), dt, omega_in_body=True
    )
    return _scatter_balls(model, joint_positions, scalars, quaternions)


def position_rates(model: Model, joint_positions: jax.Array, joint_velocities: jax.Array) -> jax.Array:
    """``dq/dt (nq,)`` at ``joint_velocities (n,)``: the velocity of a scalar joint, ``Q (0, omega) / 2``
    for a ball joint (explicit integrators: renormalise with :func:`normalize_positions`)."""
    if not model.ball_dofs:
        return joint_velocities
    layout = position_layout(model)
    rates = spatial.quaternion_derivative(
        ball_quaternions(model, joint_positions), _ball_velocities(model, joint_velocities), omega_in_body=True
    )
    return _scatter_balls(model, joint_positions, joint_velocities[layout.scalar_dofs], rates)


def normalize_positions(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``(nq,)`` with every ball joint's quaternion of unit norm."""
    if not model.ball_dofs:
        return joint_positions
    layout = position_layout(model)
    quaternions = spatial.normalize(ball_quaternions(model, joint_positions))
    return _scatter_balls(model, joint_positions, joint_positions[layout.scalar_positions], quaternions)


def position_difference(model: Model, start: jax.Array, end: jax.Array) -> jax.Array:
    """``(n,)``: the velocity that moves ``start`` to ``end`` (both ``(nq,)``) in unit time: ``end -
    start`` for scalar joints, ``log(Q_start^-1 Q_end)`` (child frame) for ball joints."""
    if not model.ball_dofs:
        return end - start
    layout = position_layout(model)
    inverse = ball_quaternions(model, start) * jnp.array([1.0, -1.0, -1.0, -1.0], start.dtype)
    relative = spatial.quaternion_multiply(inverse, ball_quaternions(model, end))
    scalars = end[layout.scalar_positions] - start[layout.scalar_positions]
    return _with_balls(model, scalars, spatial.quaternion_log(spatial.normalize(relative)))
