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

A step holds at most ``SOFT_LIMIT_ROWS`` of a model's limits as rows (a static budget, so that
the limits away from their bounds cost nothing): the first engaged ones in the model's order,
chosen at each state by a selection matrix (:func:`selected_limits`; a slot left empty is a
row that is not engaged). A limit engaged beyond the budget (:func:`dropped_limits` counts
them) falls back on the spring-damper limit of :func:`.joint_effects.joint_effects`; with no
more limits engaged than the budget the rows are MuJoCo's.
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


SOFT_LIMIT_ROWS = 4
"""The most soft joint limits a step holds as constraint rows (see the module docstring)."""


def limit_distances(model: Model, positions: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``psi (c,)`` [rad or m] of ``model``'s soft limits at the DoF ``positions (n,)``, their
    nearer side's distance (negative: engaged; 1 at an infinite bound), and that side's
    direction ``sign (c,)``: +1 for the lower side, -1 for the upper one."""
    limits = model.soft_limits
    dtype = positions.dtype
    dofs = np.asarray(limits.dofs, dtype=int)
    q = positions[dofs]
    margin = limits.margin.astype(dtype)
    below = q - model.position_limit_lower[dofs].astype(dtype) - margin
    above = model.position_limit_upper[dofs].astype(dtype) - q - margin
    lower = below <= above
    psi = jnp.where(lower, below, above)
    return jnp.where(jnp.isfinite(psi), psi, 1.0), jnp.where(lower, 1.0, -1.0).astype(dtype)


def limit_budget(model: Model) -> int:
    """The number of rows a step holds for ``model``'s soft limits (static)."""
    return min(model.soft_limits.count, SOFT_LIMIT_ROWS)


def selected_limits(model: Model, positions: jax.Array) -> jax.Array | None:
    """The selection ``P (k, c)`` (0 or 1, the positions' dtype; ``k`` the :func:`limit_budget`)
    of the limits held as rows at the DoF ``positions (n,)``: row ``i`` picks the ``i``-th
    engaged limit in the model's order, or none; None when every limit fits the budget (all are
    held, in order)."""
    count = model.soft_limits.count
    if count <= SOFT_LIMIT_ROWS:
        return None
    psi, _ = limit_distances(model, positions)
    engaged = psi < 0.0
    rank = jnp.cumsum(engaged) - 1
    picked = engaged[None, :] & (rank[None, :] == jnp.arange(SOFT_LIMIT_ROWS)[:, None])
    return picked.astype(positions.dtype)


def held_limits(model: Model, positions: jax.Array) -> jax.Array:
    """``(c,)`` (0 or 1, the positions' dtype): which of ``model``'s soft limits the step holds
    as rows at the DoF ``positions (n,)``."""
    selection = selected_limits(model, positions)
    return jnp.ones(model.soft_limits.count, positions.dtype) if selection is None else selection.sum(axis=0)


def dropped_limits(model: Model, positions: jax.Array) -> jax.Array:
    """The number of ``model``'s soft limits engaged at the DoF ``positions (n,)`` but not held
    as rows (beyond the budget: their spring-damper limit acts instead; int, scalar)."""
    psi, _ = limit_distances(model, positions)
    return jnp.sum((psi < 0.0) & (held_limits(model, positions) == 0.0))


def limit_rows(model: Model, state: State, dt: jax.Array) -> Rows:
    """The unilateral rows ``(k,)`` of ``model``'s soft joint limits at ``state`` for a step of
    ``dt`` [s], ``k`` the :func:`limit_budget` (see the module docstring)."""
    limits = model.soft_limits
    dtype = state.joint_positions.dtype
    positions = dof_positions(model, state.joint_positions)
    psi, sign = limit_distances(model, positions)
    dofs = np.asarray(limits.dofs, dtype=int)
    count = limits.count
    velocity = sign * state.joint_velocities[dofs]
    target, compliance = soft_limit_reference(
        psi, velocity, limits.solimp.astype(dtype), limits.time_constant.astype(dtype), limits.damping_ratio.astype(dtype),
        limits.inverse_weight.astype(dtype), dt,
    )
    jacobian = jnp.zeros((count, model.dofs), dtype).at[np.arange(count), dofs].set(sign)
    engaged = psi < 0.0
    selection = selected_limits(model, positions)
    if selection is not None:
        jacobian, target, compliance = selection @ jacobian, selection @ target, selection @ compliance
        engaged = selection.sum(axis=1) > 0.0
    flags = np.ones(limit_budget(model), dtype=bool)
    return Rows(jacobian, target, jnp.zeros_like(target), engaged, ~flags, flags, compliance)
