"""Forward dynamics with the articulated-body algorithm, in the world frame, level by level.

Working in world axes removes every parent-child transform from the recursions: articulated
inertias and bias forces are summed into the parents, one tree level at a time (see
:mod:`.levels`). The floating base is solved by 3x3 blocks (no LAPACK call, so it batches).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from . import kinematics as kin_module
from . import levels
from . import representations as rep
from . import spatial
from .model import Model
from .rnea import check_joint_vector, link_wrenches_inertial
from .state import State, check_representation


def _inverse3(A: jax.Array) -> jax.Array:
    """Inverse of a ``(3, 3)`` matrix by cross products (adjugate over determinant)."""
    c0, c1, c2 = jnp.cross(A[1], A[2]), jnp.cross(A[2], A[0]), jnp.cross(A[0], A[1])
    return jnp.stack([c0, c1, c2], axis=1) / spatial.dot(A[0], c0)


def solve6(A: jax.Array, b: jax.Array) -> jax.Array:
    """``A^{-1} b`` for ``A (6, 6)`` whose upper-left 3x3 block and its Schur complement are
    invertible (a positive definite ``A``, symmetric or not: a free body's inertia with its
    gyroscopic term), by 3x3 blocks: no LAPACK call, so it batches on any device; elementwise
    products, no tiny dots."""
    A11_inv = _inverse3(A[:3, :3])
    schur_inv = _inverse3(A[3:, 3:] - spatial.matmul(A[3:, :3], spatial.matmul(A11_inv, A[:3, 3:])))
    y = spatial.matvec(A11_inv, b[:3])
    x2 = spatial.matvec(schur_inv, b[3:] - spatial.matvec(A[3:, :3], y))
    return jnp.concatenate([y - spatial.matvec(A11_inv, spatial.matvec(A[:3, 3:], x2)), x2])


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
    dtype = kin.G_H_L.dtype
    g = kin_module.default_gravity(dtype) if gravity is None else jnp.asarray(gravity, dtype)
    tau = check_joint_vector(model, "joint_torques", joint_torques, dtype)
    G_f_ext = link_wrenches_inertial(model, kin, link_wrenches, representation)
    G_a_B, joint_accelerations = articulated_body_accelerations(model, kin, tau, G_f_ext, g)
    if not model.floating_base:
        return jnp.zeros(6, dtype=dtype), joint_accelerations
    return rep.acceleration_from_inertial(G_a_B, kin.G_H_L[0], kin.G_v_B, representation, kin.origin), joint_accelerations


class ArticulatedFactor(NamedTuple):
    """What an articulated-body pass keeps of the (augmented) mass matrix, per link ``(N, ...)``
    in link order: the motion subspaces ``S (N, 6)``, ``U = IA S (N, 6)`` and ``D = S^T IA S +
    armature (N,)`` (world axes), and the floating base's articulated inertia ``root (6, 6)``."""

    S: jax.Array
    U: jax.Array
    D: jax.Array
    root: jax.Array


def articulated_body_accelerations(
    model: Model,
    kin: kin_module.Kinematics,
    joint_torques: jax.Array,
    G_f_ext: jax.Array,
    gravity: jax.Array,
    *,
    added_inertia: jax.Array | None = None,
    armature: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array]:
    """``d/dt G_v_WB (6,)`` (zero with a fixed base) and joint accelerations ``(n,)`` from the
    kinematics of a state, torques ``(n,)``, external wrenches ``G_f (N, 6)`` and ``gravity (3,)``.

    ``M`` includes the joints' ``model.joint_armature``. With ``added_inertia H (N, 6, 6)`` (world
    axes, about the origin of ``G``) and ``armature (n,)``, solves ``(M + sum_L J_L^T H_L J_L +
    diag(armature)) a = tau - h(q, nu) + sum_L J_L^T f_L``
    instead: the same tree with augmented link inertias and joint-space diagonal terms, no
    factorisation (the implicit step's linear system)."""
    G_a_B, joint_accelerations, _ = articulated_body_factorised(
        model, kin, joint_torques, G_f_ext, gravity, added_inertia=added_inertia, armature=armature
    )
    return G_a_B, joint_accelerations


def articulated_body_factorised(
    model: Model,
    kin: kin_module.Kinematics,
    joint_torques: jax.Array,
    G_f_ext: jax.Array,
    gravity: jax.Array,
    *,
    added_inertia: jax.Array | None = None,
    armature: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array, ArticulatedFactor]:
    """:func:`articulated_body_accelerations` and the :class:`ArticulatedFactor` of its matrix,
    for :func:`articulated_body_responses` to solve more right-hand sides with."""
    dtype = kin.G_H_L.dtype
    S, v, M = kin.G_S, kin.G_v, kin.G_M
    c = kin_module.velocity_products(model, v, S, kin.qd)
    pA = spatial.cross_force(v, spatial.matvec(M, v)) - G_f_ext
    if added_inertia is not None:
        # The recursion's link accelerations are J_L a + J_L_dot nu - [g; 0]: cancel what the
        # added inertia makes of the last two terms, so that it acts on J_L a alone.
        bias = kin_module.ancestors_sum(model, c) - jnp.concatenate([gravity, jnp.zeros(3, dtype=dtype)])
        pA = pA - spatial.matvec(added_inertia, bias)
        M = M + added_inertia
    total_armature = model.joint_armature.astype(dtype) if armature is None else model.joint_armature + armature
    link_armature = kin_module.to_link_order(model, total_armature)
    link_inputs = (M, pA, S, c, kin_module.to_link_order(model, joint_torques), link_armature)

    def articulate(children, inputs):
        (IA_children, pA_children), (M, p, S, c, tau, armature) = children, inputs
        IA, pA = M + IA_children, p + pA_children
        # One dot gives U = IA S and IA c, and stores U once for its many uses.
        U, IA_c = jnp.moveaxis(spatial.matmul(IA, jnp.stack([S, c], axis=-1), fused=False), -1, 0)
        D = spatial.dot(S, U) + armature
        # u holds -U.c as well, so that the downward pass needs the parents' accelerations only.
        u = tau - spatial.dot(S, pA) - spatial.dot(U, c)
        Ia = IA - U[:, :, None] * U[:, None, :] / D[:, None, None]
        return (Ia, pA + IA_c + U * (u / D)[:, None]), (U, D, u)

    zeros = (jnp.zeros((6, 6), dtype), jnp.zeros(6, dtype))
    root_outputs = (jnp.zeros((1, 6), dtype), jnp.ones(1, dtype), jnp.zeros(1, dtype))
    (IA_root, pA_root), (U, D, u) = levels.scan_up(model, articulate, zeros, root_outputs, link_inputs)

    W_a_gravity = jnp.concatenate([gravity, jnp.zeros(3, dtype=dtype)])
    if model.floating_base:
        root = M[0] + IA_root[0]
        a_root = -solve6(root, pA[0] + pA_root[0])
    else:
        root, a_root = jnp.eye(6, dtype=dtype), -W_a_gravity

    def accelerate(a_parents, inputs):
        S, c, U, D, u = inputs
        qdd = (u - spatial.dot(U, a_parents, fused=False)) / D
        return a_parents + c + S * qdd[:, None], qdd

    qdd = levels.scan_down(model, accelerate, a_root[None], jnp.zeros(1, dtype), (S, c, U, D, u))
    joint_accelerations = kin_module.to_joint_order(model, qdd)
    factor = ArticulatedFactor(S, U, D, root)
    if not model.floating_base:
        return jnp.zeros(6, dtype=dtype), joint_accelerations, factor
    return a_root + W_a_gravity, joint_accelerations, factor


def articulated_body_responses(
    model: Model, factor: ArticulatedFactor, joint_torques: jax.Array | None, link_wrenches: jax.Array | None = None
) -> tuple[jax.Array, jax.Array]:
    """The responses ``M^-1 Q`` of the factorised matrix to the generalised forces ``Q`` of joint
    torques ``(k, n)`` and link wrenches ``G_f (k, N, 6)`` (world axes, about ``G``'s origin;
    ``Q = tau + sum_L J_L^T f_L``; either may be None), alone (no velocity, gravity or other
    force): the base's ``d/dt G_v_WB (k, 6)`` (zero with a fixed base) and the joint
    accelerations ``(k, n)``. Per right-hand side, the two traversals of a 6-vector per link,
    the articulated inertias being those of ``factor``."""
    dtype = factor.U.dtype
    size = joint_torques.shape[0] if joint_torques is not None else link_wrenches.shape[0]
    if joint_torques is None:
        joint_torques = jnp.zeros((size, model.dofs), dtype)

    def articulate(pA, inputs):
        S, U, D, tau = inputs
        u = tau - spatial.dot(S, pA)
        return pA + U * (u / D)[:, None], u

    def articulate_wrenches(pA, inputs):
        S, U, D, tau, f = inputs
        return articulate(pA - f, (S, U, D, tau))

    def one(tau: jax.Array, f: jax.Array | None) -> tuple[jax.Array, jax.Array]:
        link_inputs = (factor.S, factor.U, factor.D, kin_module.to_link_order(model, tau))
        if f is None:
            pA_root, u = levels.scan_up(model, articulate, jnp.zeros(6, dtype), jnp.zeros(1, dtype), link_inputs)
            p_root = pA_root[0]
        else:
            pA_root, u = levels.scan_up(model, articulate_wrenches, jnp.zeros(6, dtype), jnp.zeros(1, dtype), link_inputs + (f,))
            p_root = pA_root[0] - f[0]
        a_root = -solve6(factor.root, p_root) if model.floating_base else jnp.zeros(6, dtype)

        def accelerate(a_parents, inputs):
            S, U, D, u = inputs
            qdd = (u - spatial.dot(U, a_parents, fused=False)) / D
            return a_parents + S * qdd[:, None], qdd

        qdd = levels.scan_down(model, accelerate, a_root[None], jnp.zeros(1, dtype), (factor.S, factor.U, factor.D, u))
        return a_root, kin_module.to_joint_order(model, qdd)

    if link_wrenches is None:
        return jax.vmap(lambda tau: one(tau, None))(joint_torques)
    return jax.vmap(one)(joint_torques, link_wrenches)
