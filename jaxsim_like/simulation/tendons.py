"""The rows of a model's tendons (:class:`~jaxsim_like.dynamics.tendons.Tendons`) at a state, for
the step to solve with its joint couplings (:func:`.couplings.enforce`, as
:class:`.constraint_rows.Rows`). Each tendon's row is its ``J_i = dL_i/dnu`` at the state
(:func:`~jaxsim_like.dynamics.tendon_kinematics.tendon_kinematics`): the constant ``C_i`` of a
fixed tendon, a row built at each step for a spatial one (no base columns: a tendon within one
tree keeps its length as the whole tree moves).

- **passive** (soft), one per passive tendon along ``J_i``: its spring (towards MuJoCo's dead
  band ``[spring_lower, spring_upper]``), damper, Coulomb friction ``-F tanh(L_dot / v_s)`` and
  armature. With the implicit integrator the dissipative forces are taken at the end of the
  step, the spring at its start (as MuJoCo's implicit integrators do: a linearly implicit
  spring loses energy at the rate ``h omega^2``): ``f = -k e - (d + F s) w+ - (armature /
  h)(w+ - w)`` with ``e`` the spring's excess at the start, ``w = L_dot``, ``w+`` at the end
  and ``s`` the friction's secant slope (as the joints', :mod:`.joint_effects`). A tendon
  couples its joints, so its damping is a rank-one ``h d J_i^T J_i`` in the step's matrix,
  which the diagonal armature of ABA cannot hold: as a soft row, solved with the rows' exact
  effective mass, the step equals the dense solve of ``M~ + h d J^T J`` (and the inertia
  ``armature J^T J``). Explicit integrators take every force at the start (the armature stays
  an inertia);
- **limits** (unilateral), two per limited tendon: ``psi = L - range_lower - margin >= 0`` along
  ``J_i`` and ``psi = range_upper - L - margin >= 0`` along ``-J_i``, engaged while ``psi < 0``
  (MuJoCo's ``dist < margin``), soft as MuJoCo's as the ball joints' cone limits
  (:mod:`.ball_limits`): their end velocity at least the target of MuJoCo's reference
  acceleration from ``psi`` (:func:`.couplings.soft_limit_reference`: ``solreflimit``, scaled by
  the impedance ``d`` of ``solimplimit``) less the compliance ``h (1 - d) / d w`` times their
  force, ``w`` the tendon's ``tendon_invweight0``;
- **equalities** (bilateral, between fixed tendons): ``G q = offset``, following the joint
  couplings' reference from ``G q - offset`` (the equality's ``solref``), with MuJoCo's
  impedance and compliance where the equality has a ``solimp`` (MJCF; see
  :func:`.couplings.equality_impedance`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.configuration import dof_positions
from ..dynamics.kinematics import Kinematics
from ..dynamics.model import Model
from ..dynamics.state import State
from ..dynamics.tendon_kinematics import TendonKinematics, tendon_kinematics
from .constraint_rows import Rows
from .couplings import equality_impedance, reference_velocity, soft_limit_reference
from .joint_effects import coulomb_slip


def _passive(model: Model, geometry: TendonKinematics, rates: jax.Array, friction_velocity: jax.Array, dt: jax.Array, implicit: bool) -> Rows:
    tendons = model.tendons
    p = np.asarray(tendons.passive, dtype=int)
    C = geometry.joints[p]
    length, rate = geometry.length[p], rates[p]
    lower, upper = tendons.spring_lower[p], tendons.spring_upper[p]
    excess = jnp.where(length > upper, length - upper, 0.0) + jnp.where(length < lower, length - lower, 0.0)
    stiffness = tendons.stiffness[p]
    # A tendon's friction velocity: the smallest of its joints'.
    velocity_scale = jnp.min(jnp.where(C != 0.0, friction_velocity[None, :], jnp.inf), axis=1)
    slip, secant = coulomb_slip(rate, velocity_scale)
    friction, damping, inertia = tendons.friction[p], tendons.damping[p], tendons.armature[p] / dt
    if implicit:
        slope = damping + friction * secant + inertia
        force = -stiffness * excess + inertia * rate
    else:
        slope = inertia
        force = -stiffness * excess - damping * rate - friction * slip + inertia * rate
    flags = np.ones(len(p), dtype=bool)
    return Rows(C, force, slope, jnp.ones(len(p), dtype=bool), flags, ~flags)


def _limits(model: Model, geometry: TendonKinematics, rates: jax.Array, dt: jax.Array) -> Rows:
    tendons = model.tendons
    i = np.asarray(tendons.limited, dtype=int)
    C = geometry.joints[i]
    length, rate = geometry.length[i], rates[i]
    margin = tendons.margin[i]
    psi = jnp.concatenate([length - tendons.range_lower[i] - margin, tendons.range_upper[i] - length - margin])
    velocity = jnp.concatenate([rate, -rate])
    time_constant, ratio, weight = (jnp.tile(getattr(tendons, f)[i], 2) for f in ("limit_time_constant", "limit_damping_ratio", "limit_inverse_weight"))
    target, compliance = soft_limit_reference(psi, velocity, jnp.tile(tendons.limit_solimp[i], (2, 1)), time_constant, ratio, weight, dt)
    flags = np.ones(2 * len(i), dtype=bool)
    return Rows(jnp.concatenate([C, -C]), target, jnp.zeros_like(target), psi < 0.0, ~flags, flags, compliance)


def _equalities(model: Model, state: State, dt: jax.Array) -> Rows:
    tendons = model.tendons
    G = tendons.equality_rows
    violation = G @ dof_positions(model, state.joint_positions) - tendons.equality_offset
    velocity = G @ state.joint_velocities
    if not any(tendons.equality_soft):
        target = reference_velocity(violation, velocity, tendons.equality_time_constant, tendons.equality_damping_ratio, dt)
        return Rows.bilateral(G, target)
    d, d_width, resistance = equality_impedance(
        tendons.equality_solimp, tendons.equality_inverse_weight, np.asarray(tendons.equality_soft, dtype=bool), violation
    )
    target = reference_velocity(violation, velocity, tendons.equality_time_constant * d_width, tendons.equality_damping_ratio, dt, d)
    return Rows.bilateral(G, target)._replace(compliance=dt * resistance)


def tendon_rows(model: Model, state: State, kin: Kinematics, friction_velocity: jax.Array, dt: jax.Array, implicit: bool) -> Rows:
    """The passive, limit and equality rows of ``model``'s tendons at ``state`` (its kinematics
    ``kin``; see the module docstring) for a step of ``dt`` [s], the friction smoothed over the
    joints' ``friction_velocity (n,)`` [rad/s or m/s]; ``implicit``: the passive forces at the
    end of the step."""
    dtype = state.joint_positions.dtype
    geometry = tendon_kinematics(model, kin, dof_positions(model, state.joint_positions))
    rates = geometry.joints @ state.joint_velocities
    rows = _passive(model, geometry, rates, friction_velocity.astype(dtype), dt, implicit)
    return rows.stack(_limits(model, geometry, rates, dt)).stack(_equalities(model, state, dt))
