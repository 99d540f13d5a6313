"""The joint couplings of a model (:class:`~jaxsim_like.dynamics.couplings.JointCouplings`, the
mimic joints) enforced in its step, as bilateral constraint rows ``G`` in joint space.

A model's solve gives the accelerations ``a_free`` of its linear system ``M~ a = rhs`` (with the
implicit integrator ``M~`` is the augmented inertia of the stiff terms, see :func:`.step.step`;
otherwise the mass matrix). The couplings add the joint torques ``G^T lambda``, so that
``a = a_free + M~^-1 G^T lambda``, with the row forces ``lambda (c,)`` [N m or N] that make the
rows' velocity at the end of the step, ``w+ = G nu+ = G (nu + h a)``, follow the reference

    w+ = (tau^2 w - h phi) / (tau^2 + 2 zeta h tau + h^2)

from the rows' violation ``phi`` and velocity ``w = G nu`` at the step's start: the linearly
implicit Euler step of the damped oscillator ``phi'' = -2 zeta phi' / tau - phi / tau^2`` of time
constant ``tau`` and damping ratio ``zeta`` (MuJoCo's ``solref`` with an impedance of one: the
rows move as this oscillator whatever the loads). With the effective mass ``A = G M~^-1 G^T (c, c)``,
one articulated-body pass per row on the factor of the model's solve
(:func:`~jaxsim_like.dynamics.aba.articulated_body_responses`),

    lambda = A^-1 ((w+ - w) / h - G a_free),

a dense ``c x c`` Cholesky solve (``A`` is positive definite: the rows of distinct followers
without cycles are independent). The joint positions advance as ``q+ = q + h nu+`` (semi-implicit
Euler), so ``phi+ = phi + h w+`` exactly: from a state on the rules ``w+ = 0`` and the rules hold
to rounding at any step size; a violation decays without overshoot for ``zeta >= 1``. The
velocity change is the ``M~``-orthogonal projection onto the reference: it removes kinetic
energy (the work of the linearised forces against the rows, second order in ``h``) and adds
none beyond ``w+`` of a violation being corrected. With RK4 every stage's accelerations satisfy
``G a = (w+ - w) / h`` at the stage's state: a linear equation of ``phi`` whose eigenvalues obey
``|lambda h| <= 1``, within RK4's stability region.
"""

from __future__ import annotations

import jax

from ..dynamics.aba import ArticulatedFactor, articulated_body_responses
from ..dynamics.model import Model
from ..dynamics.state import State
from .constraint_rows import Rows, row_forces, solve_spd
from .params import ModelParams

__all__ = ["enforce", "reference_velocity", "solve_spd"]


def reference_velocity(violation: jax.Array, velocity: jax.Array, time_constant: jax.Array, damping_ratio: jax.Array, dt: jax.Array) -> jax.Array:
    """``w+ (c,)``: the rows' velocity at the end of a step of ``dt`` [s] from their
    ``violation`` and ``velocity`` ``(c,)`` at its start (see the module docstring)."""
    tau = time_constant.astype(violation.dtype)
    denominator = tau**2 + 2 * damping_ratio * dt * tau + dt**2
    return (tau**2 * velocity - dt * violation) / denominator


def enforce(
    model: Model,
    params: ModelParams,
    state: State,
    factor: ArticulatedFactor,
    G_a_B: jax.Array,
    joint_accelerations: jax.Array,
    dt: jax.Array,
    extra: Rows | None = None,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The base acceleration ``d/dt G_v_WB (6,)`` and ``joint_accelerations (n,)`` of a model's
    solve, with the ``factor`` of its matrix, made to follow the couplings' reference from
    ``state`` over a step of ``dt`` [s]; returns them and the coupling torques ``G^T lambda (n,)``.
    ``extra``: more constant joint-space rows (:class:`.constraint_rows.Rows`: the tendons'),
    solved together with the couplings' by :func:`.constraint_rows.row_forces`."""
    couplings = model.couplings
    rows = couplings.jacobian(model.dofs).astype(joint_accelerations.dtype)
    velocity = couplings.rate(state.joint_velocities)
    target = reference_velocity(
        couplings.violation(state.joint_positions), velocity, params.coupling_time_constant, params.coupling_damping_ratio, dt
    )
    if extra is not None:
        stacked = Rows.bilateral(rows, target).stack(extra)
        rows = stacked.jacobian
        base_responses, joint_responses = articulated_body_responses(model, factor, rows)
        start = rows @ (state.joint_velocities + dt * joint_accelerations)
        forces = row_forces(stacked, joint_responses @ rows.T, start, dt)
        return G_a_B + forces @ base_responses, joint_accelerations + forces @ joint_responses, forces @ rows
    base_responses, joint_responses = articulated_body_responses(model, factor, rows)
    effective = jax.vmap(couplings.rate)(joint_responses)  # (G M~^-1 G^T)^T, symmetric
    forces = solve_spd(effective, (target - velocity) / dt - couplings.rate(joint_accelerations))
    return G_a_B + forces @ base_responses, joint_accelerations + forces @ joint_responses, forces @ rows
