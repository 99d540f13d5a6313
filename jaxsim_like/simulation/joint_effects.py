"""Joint effects added to the commanded torques: effort limits, position limits, damping, friction."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..dynamics.model import Model


class JointEffects(NamedTuple):
    """The torques ``(n,)`` acting at the joints and their slopes: ``damping = -d tau / d q_dot``
    and ``stiffness = -d tau / d q`` ``(n,)``, both non-negative (what an implicit step needs)."""

    torques: jax.Array
    damping: jax.Array
    stiffness: jax.Array


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

    The command is clipped to ``model.effort_limit``; a joint past a position limit feels a
    spring-damper ``K (limit - q) - D q_dot`` pushing it back (damping only while it moves further
    out); the description's viscous damping ``-b q_dot`` and Coulomb friction
    ``-F tanh(q_dot / friction_velocity)`` (smooth, so gradients stay finite) oppose motion.
    """
    clipped = jnp.clip(commanded, -model.effort_limit, model.effort_limit)
    below = jnp.minimum(positions - model.position_limit_lower, 0.0)
    above = jnp.maximum(positions - model.position_limit_upper, 0.0)
    below = jnp.where(jnp.isfinite(model.position_limit_lower), below, 0.0)
    above = jnp.where(jnp.isfinite(model.position_limit_upper), above, 0.0)
    spring = -limit_stiffness * (below + above)
    going_out = ((below < 0) & (velocities < 0)) | ((above > 0) & (velocities > 0))
    damper = jnp.where(going_out, -limit_damping * velocities, 0.0)
    viscous = -model.joint_damping * velocities
    slip = jnp.tanh(velocities / friction_velocity)
    coulomb = -model.joint_friction * slip
    damping = jnp.where(going_out, limit_damping, 0.0) + model.joint_damping + model.joint_friction / friction_velocity * (1 - slip**2)
    stiffness = jnp.where((below < 0) | (above > 0), limit_stiffness, 0.0)
    return JointEffects(clipped + spring + damper + viscous + coulomb, damping, stiffness)

