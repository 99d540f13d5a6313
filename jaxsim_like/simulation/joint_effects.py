"""Joint effects added to the commanded torques: effort limits, position limits, damping, friction."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..dynamics.model import Model


def joint_torques(
    model: Model,
    positions: jax.Array,
    velocities: jax.Array,
    commanded: jax.Array,
    *,
    limit_stiffness: jax.Array,
    limit_damping: jax.Array,
    friction_velocity: jax.Array,
) -> jax.Array:
    """The torques ``(n,)`` [N m or N] acting at the joints.

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
    coulomb = -model.joint_friction * jnp.tanh(velocities / friction_velocity)
    return clipped + spring + damper + viscous + coulomb
