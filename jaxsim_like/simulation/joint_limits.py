"""The rows of a model's soft joint limits (:class:`~jaxsim_like.dynamics.soft_limits.SoftLimits`)
at a state, for the step to solve with its other constraint rows (:func:`.couplings.enforce`, as
:class:`.constraint_rows.Rows`): MuJoCo's joint limit, one unilateral row per soft-limited joint.

Joint ``k`` at position ``q`` is ``psi_l = q - lower - margin`` from its lower side and ``psi_u =
upper - q - margin`` from its upper side; its row is the nearer side's, ``psi = min(psi_l,
psi_u) >= 0`` along ``G = +e_k`` (lower) or ``-e_k`` (upper), engaged while ``psi < 0``
(MuJoCo's ``dist < margin``), soft as MuJoCo's as the ball joints' cone limits
(:mod:`.ball_limits`): the end velocity at least the target of MuJoCo's reference acceleration
from ``psi`` (:func:`.couplings.soft_limit_reference`: ``solreflimit``, scaled by the impedance
``d`` of ``solimplimit``) less the compliance ``h (1 - d) / d w`` times the row's force, ``w``
the joint's ``dof_invweight0``. MuJoCo makes a row for each side within its margin: both are
only when the range is narrower than twice the margin (the MJCF loader warns), so one row per
joint is MuJoCo's limit at half the rows. A side at an infinite bound is never engaged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.configuration import dof_positions
from ..dynamics.model import Model
from ..dynamics.state import State
from .constraint_rows import Rows
from .couplings import soft_limit_reference


def limit_rows(model: Model, state: State, dt: jax.Array) -> Rows:
    """The unilateral rows ``(c,)`` of ``model``'s soft joint limits at ``state`` for a step of
    ``dt`` [s] (see the module docstring)."""
    limits = model.soft_limits
    dtype = state.joint_positions.dtype
    dofs = np.asarray(limits.dofs, dtype=int)
    q = dof_positions(model, state.joint_positions)[dofs]
    margin = limits.margin.astype(dtype)
    below = q - model.position_limit_lower[dofs].astype(dtype) - margin
    above = model.position_limit_upper[dofs].astype(dtype) - q - margin
    lower = below <= above
    sign = jnp.where(lower, 1.0, -1.0).astype(dtype)
    psi = jnp.where(lower, below, above)
    psi = jnp.where(jnp.isfinite(psi), psi, 1.0)  # an infinite bound: never engaged
    count = len(dofs)
    jacobian = jnp.zeros((count, model.dofs), dtype).at[np.arange(count), dofs].set(sign)
    velocity = sign * state.joint_velocities[dofs]
    target, compliance = soft_limit_reference(
        psi, velocity, limits.solimp.astype(dtype), limits.time_constant.astype(dtype), limits.damping_ratio.astype(dtype),
        limits.inverse_weight.astype(dtype), dt,
    )
    flags = np.ones(count, dtype=bool)
    return Rows(jacobian, target, jnp.zeros_like(target), psi < 0.0, ~flags, flags, compliance)
