"""Joint effects added to the commanded torques: effort limits, position limits, damping, friction."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.model import Model
from .joint_limits import held_limits

LIMIT_BLEND = 1e-2
"""[rad or m]: the excess over a position limit across which its damper and slopes are blended in."""


class JointEffects(NamedTuple):
    """The torques ``(n,)`` acting at the joints and their slopes: ``damping`` (``-d tau / d q_dot``,
    the Coulomb friction's by its secant) and ``stiffness = -d tau / d q`` ``(n,)``, both
    non-negative (what an implicit step needs)."""

    torques: jax.Array
    damping: jax.Array
    stiffness: jax.Array


def coulomb_slip(velocity: jax.Array, friction_velocity: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The smoothed Coulomb friction's ``tanh(v / v_s)`` and its secant slope ``tanh(v / v_s) / v``
    [s/rad or s/m] (``1 / v_s`` at rest), for velocities ``v`` and ``friction_velocity`` ``v_s``
    (same shapes). The friction ``F`` times the secant, taken implicitly, can stop a joint (or a
    tendon) within a step but never reverses it, so the friction never chatters."""
    x = velocity / friction_velocity
    slip = jnp.tanh(x)
    small = jnp.abs(x) < 1e-4
    return slip, jnp.where(small, 1 - x**2 / 3, slip / jnp.where(small, 1.0, x)) / friction_velocity


def joint_effects(
    model: Model,
    positions: jax.Array,
    velocities: jax.Array,
    commanded: jax.Array,
    *,
    limit_stiffness: jax.Array,
    limit_damping: jax.Array,
    friction_velocity: jax.Array,
) -> JointEffects:
    """The :class:`JointEffects` at joint ``positions`` and ``velocities`` ``(n,)``.

    The command is clipped to ``model.effort_limit``; a joint past a position limit by ``e``
    (but those of ``model.soft_limits`` the step holds as constraint rows,
    :func:`.joint_limits.held_limits`) feels a spring-damper ``-K e - w D q_dot`` pushing it back, with the damper blended in over
    the first ``LIMIT_BLEND`` of the excess (``w = 3 r^2 - 2 r^3``, ``r = min(1, |e| /
    LIMIT_BLEND)``, as are the slopes, so that torques and slopes are smooth in the state); the description's viscous
    damping ``-b q_dot`` and Coulomb friction ``-F tanh(q_dot / friction_velocity)`` (smooth, so
    gradients stay finite) oppose motion; the joint springs pull with ``-k (q - q_ref)`` (its
    slope ``k`` in ``stiffness``: the implicit step takes them at the end of the step, as the
    limits).
    """
    clipped = jnp.clip(commanded, -model.effort_limit, model.effort_limit)
    below = jnp.minimum(positions - model.position_limit_lower, 0.0)
    above = jnp.maximum(positions - model.position_limit_upper, 0.0)
    below = jnp.where(jnp.isfinite(model.position_limit_lower), below, 0.0)
    above = jnp.where(jnp.isfinite(model.position_limit_upper), above, 0.0)
    excess = below + above
    if model.soft_limits.count:
        # The limits held as rows this step; the others (beyond the budget) keep the spring-damper.
        dofs = np.asarray(model.soft_limits.dofs, dtype=int)
        excess = excess.at[dofs].multiply(1.0 - held_limits(model, positions))
    ramp = jnp.minimum(jnp.abs(excess) / LIMIT_BLEND, 1.0)
    blend = ramp * ramp * (3 - 2 * ramp)
    spring = -limit_stiffness * excess
    damper = -blend * limit_damping * velocities
    viscous = -model.joint_damping * velocities
    joint_springs = -model.joint_stiffness * (positions - model.joint_spring_reference)
    slip, secant = coulomb_slip(velocities, friction_velocity)
    coulomb = -model.joint_friction * slip
    damping = blend * limit_damping + model.joint_damping + model.joint_friction * secant
    return JointEffects(clipped + spring + damper + viscous + joint_springs + coulomb, damping, blend * limit_stiffness + model.joint_stiffness)
