"""Forward dynamics with the articulated-body algorithm, in the world frame, level by level.

Working in world axes removes every parent-child transform from the recursions: articulated
inertias and bias forces are summed into the parents with one scatter-add per tree level. The
floating base is solved with an unrolled 6x6 LDL^T (no LAPACK call, so it batches on any device).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import kinematics as kin_module
from . import representations as rep
from . import spatial
from .model import Model
from .rnea import check_joint_vector, link_wrenches_inertial
from .state import State, check_representation


def solve_spd6(A: jax.Array, b: jax.Array) -> jax.Array:
    """``A^{-1} b`` for a symmetric positive definite ``A (6, 6)`` by an unrolled LDL^T."""
    n = A.shape[-1]
    L = [[None] * n for _ in range(n)]
    D = [None] * n
    for j in range(n):
        D[j] = A[j, j] - sum(L[j][k] * L[j][k] * D[k] for k in range(j))
        for i in range(j + 1, n):
            L[i][j] = (A[i, j] - sum(L[i][k] * L[j][k] * D[k] for k in range(j))) / D[j]
    y = [None] * n
    for i in range(n):
        y[i] = b[i] - sum(L[i][k] * y[k] for k in range(i))
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = y[i] / D[i] - sum(L[k][i] * x[k] for k in range(i + 1, n))
    return jnp.stack(x)


def forward_dynamics(
    model: Model,
    state: State,
    *,
    joint_torques: jax.Array | None = None,
    link_wrenches: jax.Array | None = None,
    gravity: jax.Array | None = None,
    velocity_representation: str | None = None,
) -> tuple[jax.Array, jax.Array]:
    """The base acceleration ``(6,)`` and joint accelerations ``(n,)`` under the given torques ``(n,)``
    and external link wrenches ``(N, 6)``.

    Link wrenches are given, and the base acceleration (the derivative of the base velocity)
    returned, in ``velocity_representation`` (default: the state's); zero base acceleration
    with a fixed base.
    """
    representation = check_representation(velocity_representation or state.velocity_representation)
    kin = kin_module.kinematics(model, state)
    dtype = kin.W_H_L.dtype
    g = kin_module.default_gravity(dtype) if gravity is None else jnp.asarray(gravity, dtype)
    tau = kin_module.to_link_order(model, check_joint_vector(model, "joint_torques", joint_torques, dtype))
    W_f_ext = link_wrenches_inertial(model, kin, link_wrenches, representation)
    parent = np.asarray(model.parent)
    S, v = kin.W_S, kin.W_v

    c = spatial.cross_motion(v, S * kin.qd[:, None])
    momentum = (kin.W_M @ v[:, :, None])[:, :, 0]
    IA = kin.W_M
    pA = spatial.cross_force(v, momentum) - W_f_ext
    U = jnp.zeros_like(S)
    D = jnp.ones_like(tau)
    u = jnp.zeros_like(tau)
    for start, stop in reversed(model.levels):
        level = slice(start, stop)
        U_l = (IA[level] @ S[level][:, :, None])[:, :, 0]
        D_l = jnp.sum(S[level] * U_l, axis=-1)
        u_l = tau[level] - jnp.sum(S[level] * pA[level], axis=-1)
        Ia = IA[level] - U_l[:, :, None] * U_l[:, None, :] / D_l[:, None, None]
        pa = pA[level] + (Ia @ c[level][:, :, None])[:, :, 0] + U_l * (u_l / D_l)[:, None]
        IA = IA.at[parent[level]].add(Ia)
        pA = pA.at[parent[level]].add(pa)
        U, D, u = U.at[level].set(U_l), D.at[level].set(D_l), u.at[level].set(u_l)

    W_a_gravity = jnp.concatenate([g, jnp.zeros(3, dtype=dtype)])
    a_root = -solve_spd6(IA[0], pA[0]) if model.floating_base else -W_a_gravity
    a = jnp.zeros_like(S).at[0].set(a_root)
    qdd = jnp.zeros_like(tau)
    for start, stop in model.levels:
        level = slice(start, stop)
        a_parent = a[parent[level]] + c[level]
        qdd_l = (u[level] - jnp.sum(U[level] * a_parent, axis=-1)) / D[level]
        a = a.at[level].set(a_parent + S[level] * qdd_l[:, None])
        qdd = qdd.at[level].set(qdd_l)

    joint_accelerations = kin_module.to_joint_order(model, qdd)
    if not model.floating_base:
        return jnp.zeros(6, dtype=dtype), joint_accelerations
    W_a_B = a_root + W_a_gravity
    return rep.acceleration_from_inertial(W_a_B, kin.W_H_L[0], kin.W_v_B, representation), joint_accelerations
