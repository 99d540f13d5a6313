"""Inverse dynamics (recursive Newton-Euler, written as sums over the tree in the world frame)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import kinematics as kin_module
from . import representations as rep
from . import spatial
from .model import Model
from .state import State, check_representation


def link_wrenches_inertial(model: Model, kin: kin_module.Kinematics, link_wrenches: jax.Array | None, representation: str) -> jax.Array:
    """``G_f (N, 6)`` of external link wrenches ``(N, 6)`` given in ``representation`` of each link."""
    if link_wrenches is None:
        return jnp.zeros((model.number_of_links, 6), dtype=kin.G_H_L.dtype)
    link_wrenches = jnp.asarray(link_wrenches, dtype=kin.G_H_L.dtype)
    if link_wrenches.shape != (model.number_of_links, 6):
        raise ValueError(f"link_wrenches must have shape ({model.number_of_links}, 6), got {tuple(link_wrenches.shape)}")
    return rep.force_to_inertial(link_wrenches, kin.G_H_L, representation, kin.origin)


def check_joint_vector(model: Model, name: str, value: jax.Array | None, dtype) -> jax.Array:
    """``value (n,)`` as an array (zeros when None); ValueError naming ``name`` on a wrong shape."""
    if value is None:
        return jnp.zeros(model.dofs, dtype=dtype)
    value = jnp.asarray(value, dtype=dtype)
    if value.shape != (model.dofs,):
        raise ValueError(f"{name} must have shape ({model.dofs},) for model {model.name!r}, got {tuple(value.shape)}")
    return value


def inverse_dynamics(
    model: Model,
    state: State,
    *,
    base_acceleration: jax.Array | None = None,
    joint_accelerations: jax.Array | None = None,
    link_wrenches: jax.Array | None = None,
    gravity: jax.Array | None = None,
    velocity_representation: str | None = None,
) -> tuple[jax.Array, jax.Array]:
    """The base wrench ``(6,)`` and joint torques ``(n,)`` that produce the given accelerations.

    ``base_acceleration (6,)`` is the derivative of the base velocity in ``velocity_representation``
    (default: the state's); ``link_wrenches (N, 6)`` are external wrenches in that representation,
    acting on each link; the base wrench is returned in it too (zero with a fixed base).
    Solves ``M nu_dot + h = [f_B; tau] + sum J^T f_ext`` (``M`` with the joints' armature).
    """
    representation = check_representation(velocity_representation or state.velocity_representation)
    kin = kin_module.kinematics(model, state)
    dtype = kin.G_H_L.dtype
    g = kin_module.default_gravity(dtype) if gravity is None else jnp.asarray(gravity, dtype)
    qdd = check_joint_vector(model, "joint_accelerations", joint_accelerations, dtype)
    G_a_B = kin_module.base_acceleration_inertial(model, state, kin, base_acceleration, representation)
    W_a_gravity = jnp.concatenate([g, jnp.zeros(3, dtype=dtype)])
    G_a = kin_module.link_accelerations_inertial(model, kin, G_a_B - W_a_gravity, qdd)
    G_f_ext = link_wrenches_inertial(model, kin, link_wrenches, representation)
    momentum = spatial.matvec(kin.G_M, kin.G_v)
    G_f = spatial.matvec(kin.G_M, G_a) + spatial.cross_force(kin.G_v, momentum) - G_f_ext
    G_F = kin_module.subtree_sum(model, G_f)
    torques = kin_module.to_joint_order(model, spatial.dot(kin.G_S, G_F)) + model.joint_armature * qdd
    if not model.floating_base:
        return jnp.zeros(6, dtype=dtype), torques
    return rep.force_from_inertial(G_F[0], kin.G_H_L[0], representation, kin.origin), torques


def bias_forces(model: Model, state: State, *, gravity: jax.Array | None = None, velocity_representation: str | None = None) -> jax.Array:
    """``h(q, nu) (nv,)``: Coriolis, centrifugal and gravity generalised forces (``[base; joints]``)."""
    base, joints = inverse_dynamics(model, state, gravity=gravity, velocity_representation=velocity_representation)
    return jnp.concatenate([base, joints]) if model.floating_base else joints


def gravity_forces(model: Model, state: State, *, gravity: jax.Array | None = None, velocity_representation: str | None = None) -> jax.Array:
    """``g(q) (nv,)``: the generalised gravity forces (``h`` at zero velocity)."""
    still = state.replace(base_velocity=jnp.zeros_like(state.base_velocity), joint_velocities=jnp.zeros_like(state.joint_velocities))
    return bias_forces(model, still, gravity=gravity, velocity_representation=velocity_representation)
