"""The constraints of a model enforced in its step: its joint couplings
(:class:`~jaxsim_like.dynamics.couplings.JointCouplings`, the mimic joints: rows ``G`` in joint
space) and its loop closures (:class:`~jaxsim_like.dynamics.loops.LoopClosures`, MJCF connect
and weld: rows of link wrenches, with base columns), as bilateral constraint rows.

A model's solve gives the accelerations ``a_free`` of its linear system ``M~ a = rhs`` (with the
implicit integrator ``M~`` is the augmented inertia of the stiff terms, see :func:`.step.step`;
otherwise the mass matrix). The rows add the generalised forces ``G^T lambda``, so that
``a = a_free + M~^-1 G^T lambda``, with the row forces ``lambda (r,)`` [N m, N or their
products with the rows' units] that make the rows' velocity at the end of the step,
``w+ = G nu+ = G (nu + h a + h d)``, follow the reference

    w+ = (tau^2 w - h phi) / (tau^2 + 2 zeta h tau + h^2) - h b / 2

from the rows' violation ``phi`` and velocity ``w = G nu`` at the step's start: the linearly
implicit Euler step of the damped oscillator ``phi'' = -2 zeta phi' / tau - phi / tau^2`` of time
constant ``tau`` and damping ratio ``zeta`` (MuJoCo's ``solref`` with an impedance of one: the
rows of URDF and SDF mimics move as this oscillator whatever the loads). A loop closure's rows
and a soft joint coupling's (an MJCF joint equality) have MuJoCo's impedance ``imp`` (of their
``solimp``, :func:`loop_impedance`, :func:`equality_impedance`): the oscillator's
stiffness is ``imp / tau^2`` (its ``tau`` scaled by ``solimp``'s ``d_width``, as MuJoCo's) and
the rows have MuJoCo's compliance ``h R`` (:class:`.constraint_rows.Rows`), so that one row of
inverse mass ``w`` moves at ``imp`` times the oscillator's rate plus ``1 - imp`` times its free
one. ``d`` is the change of the base's inertial
velocity that the step makes beside ``h a`` (with the mixed representation, where it integrates
the derivative of the mixed velocity: ``-[o_dot x omega; 0]``), and ``b`` the rows' path bias
``J_dot nu`` (:class:`~jaxsim_like.dynamics.loops.LoopRows`; zero for joint couplings): the
positions advance as ``q+ = q + h nu+`` (semi-implicit Euler), so that ``phi+ = phi + h G nu+ +
h^2 b / 2 + O(h^3)`` is ``phi`` advanced by the oscillator's step: a loop does not drift under
centripetal loads. With the effective mass ``A = G M~^-1 G^T (r, r)``, one articulated-body
pass per row on the factor of the model's solve
(:func:`~jaxsim_like.dynamics.aba.articulated_body_responses`),

    lambda = A^-1 ((w+ - w) / h - G a_free - G d),

a dense ``r x r`` Cholesky solve of ``A`` regularised by ``eps^(3/4)`` of its mean diagonal
(``eps`` the dtype's), so that redundant rows (a connect closing a planar loop has a row that
no motion moves) solve as zero forces. From a state on the rules ``w+ = -h b / 2`` and the rules
hold to ``O(h^3)`` per step; a violation decays without overshoot for ``zeta >= 1``. The
velocity change is the ``M~``-orthogonal projection onto the reference: it removes kinetic
energy (the work of the linearised forces against the rows, second order in ``h``) and adds
none beyond ``w+`` of a violation being corrected. With RK4, whose stages' rates are
derivatives, every stage's accelerations satisfy ``G a + b = (w+ - w) / h`` with ``w+`` the
oscillator's step from ``w`` and ``d = 0``: a linear equation of ``phi`` whose eigenvalues obey
``|lambda h| <= 1``, within RK4's stability region.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import kinematics as kin_module
from ..dynamics.aba import ArticulatedFactor, articulated_body_responses
from ..dynamics.configuration import dof_positions
from ..dynamics.kinematics import Kinematics
from ..dynamics.loops import WORLD, LoopClosures, loop_rows
from ..dynamics.model import Model, topology
from ..dynamics.state import State
from .constraint_rows import MAX_IMPEDANCE, MIN_IMPEDANCE, Rows, impedance, row_forces
from .params import ModelParams


def reference_velocity(
    violation: jax.Array, velocity: jax.Array, time_constant: jax.Array, damping_ratio: jax.Array, dt: jax.Array,
    impedance: jax.Array | float = 1.0,
) -> jax.Array:
    """``w+ (c,)``: the rows' velocity at the end of a step of ``dt`` [s] from their
    ``violation`` and ``velocity`` ``(c,)`` at its start (see the module docstring), the
    oscillator's stiffness scaled by the rows' ``impedance`` ``d`` (MuJoCo's ``-b w - d k phi``)."""
    tau = time_constant.astype(violation.dtype)
    denominator = tau**2 + 2 * damping_ratio * dt * tau + impedance * dt**2
    return (tau**2 * velocity - dt * impedance * violation) / denominator


def soft_limit_reference(
    violation: jax.Array, velocity: jax.Array, solimp: jax.Array, time_constant: jax.Array, damping_ratio: jax.Array,
    inverse_weight: jax.Array, dt: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """MuJoCo's soft limit of unilateral rows ``(c,)`` at ``violation`` and ``velocity``: their
    end-velocity target ``w + dt a_ref`` with MuJoCo's reference acceleration ``a_ref = -b w - d k
    psi`` (``k = 1 / (d_width t z)^2``, ``b = 2 / (d_width t)`` of the ``solref`` ``(t, z)``, here
    ``time_constant = t z`` and ``damping_ratio = z``, with ``t`` at least ``2 dt`` as MuJoCo's
    ``refsafe``; ``d`` the impedance of ``solimp (c, 5)``, :func:`.constraint_rows.impedance`,
    ``d_width`` its largest), and their compliance ``dt (1 - d) / d w`` from their approximate
    inverse masses ``inverse_weight (c,)`` (:class:`.constraint_rows.Rows`). A row of one degree
    of freedom whose inverse mass is ``w`` then moves at MuJoCo's ``d a_ref + (1 - d) a_free``."""
    d = impedance(solimp, violation)
    d_width = jnp.clip(solimp[:, 1], MIN_IMPEDANCE, MAX_IMPEDANCE)
    solref_time = jnp.maximum(time_constant / damping_ratio, 2.0 * dt)
    stiffness = 1.0 / (d_width * solref_time * damping_ratio) ** 2
    damping = 2.0 / (d_width * solref_time)
    acceleration = -damping * velocity - d * stiffness * violation
    return velocity + dt * acceleration, dt * (1.0 - d) / d * inverse_weight


def loop_impedance(loops: LoopClosures, violation: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Per row ``(r,)`` of the ``loops`` at their ``violation (r,)``, as MuJoCo's connects and
    welds: the impedance ``d`` of its closure's ``solimp`` at the norm of the closure's violation
    (its 3 or 6 rows, :func:`.constraint_rows.impedance`), the closure's largest impedance
    ``d_width``, and the row's resistance ``R = (1 - d) / d w`` (velocity per force per second)
    with ``w`` the closure's approximate inverse mass of translation or rotation."""
    dtype = violation.dtype
    closure = loops.row_closure
    squared = jnp.zeros(loops.count, dtype).at[closure].add(violation**2)
    nonzero = squared > 0.0
    norm = jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, squared, 1.0)), 0.0)  # finite gradients at zero
    solimp = loops.solimp.astype(dtype)
    d = impedance(solimp, norm)[closure]
    d_width = jnp.clip(solimp[:, 1], MIN_IMPEDANCE, MAX_IMPEDANCE)[closure]
    weight = loops.inverse_weight.astype(dtype)[closure, loops.row_rotational.astype(int)]
    return d, d_width, (1.0 - d) / d * weight


def equality_impedance(
    solimp: jax.Array, inverse_weight: jax.Array, soft: np.ndarray, violation: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Per row ``(c,)`` of joint couplings or tendon equalities at their ``violation (c,)``, as
    MuJoCo's joint and tendon equalities: the impedance ``d`` of the row's ``solimp (c, 5)`` at
    the violation (:func:`.constraint_rows.impedance`), its largest impedance ``d_width`` and the
    row's resistance ``R = (1 - d) / d w`` with ``w`` its approximate ``inverse_weight (c,)``
    (MuJoCo's ``efc_R``: the ``dof_invweight0`` of its joints or the ``tendon_invweight0`` of its
    tendons, summed); one, one and zero for the rows that are not ``soft (c,)`` (static)."""
    dtype = violation.dtype
    soft = jnp.asarray(soft)
    solimp = solimp.astype(dtype)
    d = jnp.where(soft, impedance(solimp, violation), 1.0)
    d_width = jnp.where(soft, jnp.clip(solimp[:, 1], MIN_IMPEDANCE, MAX_IMPEDANCE), 1.0)
    return d, d_width, jnp.where(soft, (1.0 - d) / d * inverse_weight.astype(dtype), 0.0)


class EqualityRows(NamedTuple):
    """A model's ``r`` constraint rows at a state: the generalised force of unit row forces as
    joint torques ``torques (r, n)`` and wrenches ``wrenches (r, m, 6)`` on the ``m`` links
    ``links`` (static; world axes, about ``G``'s origin; either None when no row has one); of
    its first ``e`` rows, the equalities (joint couplings, then loop closures), the
    ``violation``, the ``velocity`` ``G nu``, the ``path_bias`` ``J_dot nu``, the reference's
    ``time_constant`` [s] and ``damping_ratio`` and the rows' ``impedance``, largest impedance
    ``width_impedance`` and ``resistance`` ``(e,)`` (a closure's: see :func:`loop_impedance`; a
    coupling's: see :func:`equality_impedance`); ``resistance`` is None without closures and
    soft couplings."""

    torques: jax.Array | None
    wrenches: jax.Array | None
    links: tuple[int, ...]
    violation: jax.Array
    velocity: jax.Array
    path_bias: jax.Array
    time_constant: jax.Array
    damping_ratio: jax.Array
    impedance: jax.Array
    width_impedance: jax.Array
    resistance: jax.Array | None

    def with_joint_rows(self, jacobian: jax.Array, dofs: int) -> "EqualityRows":
        """These rows followed by the joint-space rows ``jacobian (k, n)``."""
        dtype = jacobian.dtype
        equalities = self.violation.shape[0]
        torques = jnp.zeros((equalities, dofs), dtype) if self.torques is None else self.torques
        wrenches = None
        if self.wrenches is not None:
            wrenches = jnp.concatenate([self.wrenches, jnp.zeros((jacobian.shape[0],) + self.wrenches.shape[1:], dtype)])
        return self._replace(torques=jnp.concatenate([torques, jacobian]), wrenches=wrenches)


def equality_rows(model: Model, params: ModelParams, state: State, kin: Kinematics, euler: bool = True) -> EqualityRows:
    """The :class:`EqualityRows` of ``model``'s joint couplings, then of its loop closures, at ``state``
    (with its kinematics ``kin``), with the references of ``params`` (one per coupling, then one
    per closure); ``euler``: the path bias along an Euler step's path (see :func:`.loops.loop_rows`)."""
    couplings, loops = model.couplings, model.loops
    dtype = kin.G_H_L.dtype
    per_row = np.concatenate([np.arange(couplings.rows), couplings.rows + loops.row_closure]).astype(int)
    time_constant = params.coupling_time_constant.astype(dtype)[per_row]
    damping_ratio = params.coupling_damping_ratio.astype(dtype)[per_row]
    torques = wrenches = None
    links: tuple[int, ...] = ()
    parts = []
    if couplings.rows:
        torques = couplings.jacobian(model.dofs).astype(dtype)
        parts.append((couplings.violation(dof_positions(model, state.joint_positions)), couplings.rate(state.joint_velocities), jnp.zeros(couplings.rows, dtype)))
    if loops.rows:
        rows = loop_rows(model, kin, euler=euler)
        closure = loops.row_closure
        links = tuple(sorted({link for link in loops.link1 + loops.link2 if link != WORLD}))
        # Each side's slot among the links; one extra slot takes the WORLD sides, then goes.
        slot = {link: k for k, link in enumerate(links)} | {WORLD: len(links)}
        slots1 = np.asarray([slot[link] for link in loops.link1], dtype=int)[closure]
        slots2 = np.asarray([slot[link] for link in loops.link2], dtype=int)[closure]
        index = np.arange(loops.rows)
        loop_wrenches = jnp.zeros((loops.rows, len(links) + 1, 6), dtype)
        loop_wrenches = loop_wrenches.at[index, slots1].add(rows.wrench1).at[index, slots2].add(rows.wrench2)[:, :-1]
        wrenches = jnp.concatenate([jnp.zeros((couplings.rows, len(links), 6), dtype), loop_wrenches])
        if torques is not None:
            torques = jnp.concatenate([torques, jnp.zeros((loops.rows, model.dofs), dtype)])
        parts.append((rows.violation, rows.rate, rows.path_bias))
    violation, velocity, path_bias = (jnp.concatenate(values) for values in zip(*parts)) if parts else (jnp.zeros(0, dtype),) * 3
    d, d_width, resistance = jnp.ones_like(violation), jnp.ones_like(violation), None
    if any(couplings.soft):
        coupling_d, coupling_width, coupling_resistance = equality_impedance(
            couplings.solimp, couplings.inverse_weight, np.asarray(couplings.soft, dtype=bool), violation[: couplings.rows]
        )
        d, d_width = d.at[: couplings.rows].set(coupling_d), d_width.at[: couplings.rows].set(coupling_width)
        resistance = jnp.zeros_like(violation).at[: couplings.rows].set(coupling_resistance)
    if loops.rows:
        loop_d, loop_width, loop_resistance = loop_impedance(loops, rows.violation)
        d, d_width = d.at[couplings.rows :].set(loop_d), d_width.at[couplings.rows :].set(loop_width)
        resistance = (jnp.zeros_like(violation) if resistance is None else resistance).at[couplings.rows :].set(loop_resistance)
    return EqualityRows(torques, wrenches, links, violation, velocity, path_bias, time_constant, damping_ratio, d, d_width, resistance)


def mujoco_reference(rows: EqualityRows, dt: jax.Array) -> jax.Array:
    """``(e,)``: the equality rows' end-velocity target ``w + dt (a_ref - J_dot nu)`` with MuJoCo's
    reference acceleration ``a_ref = -b w - d k phi`` (``k = 1 / (d_width t z)^2``, ``b = 2 /
    (d_width t)`` of ``solref (t, z)``: ``time_constant = t z``, ``damping_ratio = z``, ``t`` at
    least ``2 dt`` as MuJoCo's ``refsafe``), less the path term as MuJoCo's ``mj_Jdotv``: what
    ``mj_step`` does to a connect or a weld (see :attr:`.loops.LoopClosures.mujoco_reference`)."""
    solref_time = jnp.maximum(rows.time_constant / rows.damping_ratio, 2.0 * dt)
    stiffness = 1.0 / (rows.width_impedance * solref_time * rows.damping_ratio) ** 2
    damping = 2.0 / (rows.width_impedance * solref_time)
    return rows.velocity + dt * (-damping * rows.velocity - rows.impedance * stiffness * rows.violation - rows.path_bias)


def _link_accelerations(model: Model, kin: Kinematics, links: tuple[int, ...], G_a_B: jax.Array, joint_accelerations: jax.Array) -> jax.Array:
    """``J_L a (m, 6)`` of the ``links``: their spatial accelerations of a generalised
    acceleration (without ``J_dot nu``), world axes about ``G``'s origin."""
    motion = kin.G_S * kin_module.to_link_order(model, joint_accelerations)[:, None]
    ancestors = topology(model.parent, model.joint_link).subtree[:, list(links)].T
    return G_a_B + jnp.asarray(ancestors, dtype=motion.dtype) @ motion


def rows_rate(model: Model, kin: Kinematics, rows: EqualityRows, G_a_B: jax.Array, joint_accelerations: jax.Array) -> jax.Array:
    """``G a (r,)`` of the base acceleration ``d/dt G_v_WB (6,)`` and ``joint_accelerations (n,)``
    (without ``J_dot nu``)."""
    count = rows.torques.shape[0] if rows.torques is not None else rows.wrenches.shape[0]
    rate = jnp.zeros(count, G_a_B.dtype)
    if rows.torques is not None:
        rate = rate + rows.torques @ joint_accelerations
    if rows.wrenches is not None:
        link_accelerations = _link_accelerations(model, kin, rows.links, G_a_B, joint_accelerations)
        rate = rate + jnp.einsum("rlk,lk->r", rows.wrenches, link_accelerations)
    return rate


def base_velocity_offset(model: Model, state: State, kin: Kinematics) -> jax.Array:
    """``d (6,)``: the base's inertial velocity after a step of ``h`` is ``G_v_WB + h (d/dt G_v_WB
    + d)``; with the mixed representation the step integrates the mixed velocity's derivative,
    which differs by ``[o_dot x omega; 0]`` (see :func:`.representations.acceleration_to_inertial`)."""
    dtype = kin.G_H_L.dtype
    if not model.floating_base or state.velocity_representation != "mixed":
        return jnp.zeros(6, dtype)
    return jnp.concatenate([-jnp.cross(kin.G_v_B[:3], kin.G_v_B[3:]), jnp.zeros(3, dtype)])


def enforce(
    model: Model,
    params: ModelParams,
    state: State,
    kin: Kinematics,
    factor: ArticulatedFactor,
    G_a_B: jax.Array,
    joint_accelerations: jax.Array,
    dt: jax.Array,
    euler: bool = True,
    extra: Rows | None = None,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The base acceleration ``d/dt G_v_WB (6,)`` and ``joint_accelerations (n,)`` of a model's
    solve, with the ``factor`` of its matrix, made to follow the constraints' reference from
    ``state`` (its kinematics ``kin``) over a step of ``dt`` [s]; returns them, the joint
    torques ``(n,)`` of the joint-space rows (the closures' forces act on links, not at joints)
    and the forces ``lambda (e,)`` of the equality rows (the joint couplings', then the loop
    closures', see :class:`EqualityRows`).
    ``euler=False`` (RK4's stages): the rates are derivatives, ``d = 0``, and the rows'
    accelerations ``G a = (w+ - w) / h - b`` with the oscillator's ``w+`` from ``w``.
    ``extra``: more constant joint-space rows (:class:`.constraint_rows.Rows`: the tendons'),
    solved together with the equality rows by :func:`.constraint_rows.row_forces`."""
    dtype = joint_accelerations.dtype
    rows = equality_rows(model, params, state, kin, euler)
    if extra is not None:
        rows = rows.with_joint_rows(extra.jacobian.astype(dtype), model.dofs)
    wrenches = None
    if rows.wrenches is not None:
        wrenches = jnp.zeros((rows.wrenches.shape[0], model.number_of_links, 6), dtype).at[:, list(rows.links)].set(rows.wrenches)
    base_responses, joint_responses = articulated_body_responses(model, factor, rows.torques, wrenches)
    effective = jax.vmap(lambda a_B, qdd: rows_rate(model, kin, rows, a_B, qdd))(base_responses, joint_responses)
    effective = 0.5 * (effective + effective.T)  # G M~^-1 G^T, symmetric to rounding
    size = effective.shape[0]
    regularisation = jnp.finfo(dtype).eps ** 0.75 * jnp.trace(effective) / size
    effective = effective + regularisation * jnp.eye(size, dtype=dtype)
    equalities = rows.violation.shape[0]
    tau = rows.time_constant * rows.width_impedance
    if euler:
        # The oscillator runs on the rows' mean rates over a step, (phi+ - phi) / h = G nu+ + h b / 2.
        half_bias = 0.5 * dt * rows.path_bias
        target = reference_velocity(rows.violation, rows.velocity - half_bias, tau, rows.damping_ratio, dt, rows.impedance) - half_bias
        offset = base_velocity_offset(model, state, kin)
        drift = rows_rate(model, kin, rows, offset, jnp.zeros_like(joint_accelerations)) if rows.wrenches is not None else 0.0
    else:
        target = reference_velocity(rows.violation, rows.velocity, tau, rows.damping_ratio, dt, rows.impedance) - dt * rows.path_bias
        drift = 0.0
    if model.loops.mujoco_reference:
        target = target.at[model.couplings.rows :].set(mujoco_reference(rows, dt)[model.couplings.rows :])
    # The rows' velocity G nu (the equalities': their rate) plus h G (a_free + d).
    velocity = rows.velocity if extra is None else rows_rate(model, kin, rows, kin.G_v_B, state.joint_velocities)
    start = velocity + dt * (rows_rate(model, kin, rows, G_a_B, joint_accelerations) + drift)
    bilateral = Rows.bilateral(rows.torques[:equalities] if rows.torques is not None else jnp.zeros((equalities, model.dofs), dtype), target)
    if rows.resistance is not None:
        bilateral = bilateral._replace(compliance=dt * rows.resistance)
    stacked = bilateral if extra is None else bilateral.stack(extra)
    forces = row_forces(stacked, effective, start, dt)
    torques = forces @ rows.torques if rows.torques is not None else jnp.zeros_like(joint_accelerations)
    return G_a_B + forces @ base_responses, joint_accelerations + forces @ joint_responses, torques, forces[:equalities]
