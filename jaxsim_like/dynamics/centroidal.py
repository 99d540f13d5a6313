"""Centre of mass, centroidal momentum and energies."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import kinematics as kin_module
from . import spatial
from .jacobians import _inertial_jacobians, _representation
from .model import Model
from .state import State


def _link_coms(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_c (N, 3)``: every link's COM in the world frame."""
    return (W_H_L[:, :3, :3] @ model.link_com[:, :, None])[:, :, 0] + W_H_L[:, :3, 3]


def com_position(model: Model, state: State) -> jax.Array:
    """``W_p_CoM (3,)`` [m]."""
    W_c = _link_coms(model, kin_module.forward_kinematics(model, state))
    return jnp.sum(model.link_mass[:, None] * W_c, axis=0) / model.total_mass


def _point_velocity_rows(points: jax.Array) -> jax.Array:
    """``(N, 3, 6)``: maps ``W_v`` of a body to the velocity of its point ``points (N, 3)``."""
    eye = jnp.broadcast_to(jnp.eye(3, dtype=points.dtype), points.shape[:-1] + (3, 3))
    return jnp.concatenate([eye, -spatial.skew(points)], axis=-1)


def com_jacobian(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``J_CoM (3, nv)``: maps ``nu`` (base part in ``velocity_representation``) to ``d/dt W_p_CoM``."""
    representation = _representation(state, velocity_representation)
    W_H_L = kin_module.forward_kinematics(model, state)
    W_J = _inertial_jacobians(model, W_H_L, kin_module.world_motion_subspaces(model, W_H_L), representation)
    rows = _point_velocity_rows(_link_coms(model, W_H_L)) @ W_J
    return jnp.einsum("n,nij->ij", model.link_mass, rows) / model.total_mass


def com_velocity(model: Model, state: State) -> jax.Array:
    """``d/dt W_p_CoM (3,)`` [m/s]."""
    kin = kin_module.kinematics(model, state)
    W_c = _link_coms(model, kin.G_H_L)
    W_cd = kin.G_v[:, :3] + jnp.cross(kin.G_v[:, 3:], W_c)
    return jnp.sum(model.link_mass[:, None] * W_cd, axis=0) / model.total_mass


def com_bias_acceleration(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``J_dot_CoM nu (3,)``: the COM acceleration at zero ``nu_dot`` (base part in the representation)."""
    representation = _representation(state, velocity_representation)
    kin = kin_module.kinematics(model, state)
    W_a_B = kin_module.base_acceleration_inertial(model, state, kin, None, representation)
    W_a = kin_module.link_accelerations_inertial(model, kin, W_a_B, jnp.zeros(model.dofs, kin.G_H_L.dtype))
    W_c = _link_coms(model, kin.G_H_L)
    w = kin.G_v[:, 3:]
    W_cd = kin.G_v[:, :3] + jnp.cross(w, W_c)
    W_cdd = W_a[:, :3] + jnp.cross(W_a[:, 3:], W_c) + jnp.cross(w, W_cd)
    return jnp.sum(model.link_mass[:, None] * W_cdd, axis=0) / model.total_mass


def _centroidal_force_transform(W_p_CoM: jax.Array) -> jax.Array:
    """``G_Xf_W (6, 6)``: moves a wrench from the world origin to the COM (world axes)."""
    return spatial.force_transform(spatial.transform(jnp.eye(3, dtype=W_p_CoM.dtype), -W_p_CoM))


def centroidal_momentum(model: Model, state: State) -> jax.Array:
    """``G_h (6,)``: ``[linear; angular]`` momentum about the COM, world axes."""
    kin = kin_module.kinematics(model, state)
    G_h = jnp.sum((kin.G_M @ kin.G_v[:, :, None])[:, :, 0], axis=0)
    G_p_CoM = jnp.sum(model.link_mass[:, None] * _link_coms(model, kin.G_H_L), axis=0) / model.total_mass
    return _centroidal_force_transform(G_p_CoM) @ G_h


def centroidal_momentum_matrix(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``A_G (6, nv)`` with ``G_h = A_G nu`` (base part of ``nu`` in ``velocity_representation``)."""
    representation = _representation(state, velocity_representation)
    W_H_L = kin_module.forward_kinematics(model, state)
    W_J = _inertial_jacobians(model, W_H_L, kin_module.world_motion_subspaces(model, W_H_L), representation)
    W_A = jnp.sum(kin_module.world_inertias(model, W_H_L) @ W_J, axis=0)
    return _centroidal_force_transform(com_position(model, state)) @ W_A


def kinetic_energy(model: Model, state: State) -> jax.Array:
    """``0.5 nu^T M nu`` [J]."""
    kin = kin_module.kinematics(model, state)
    return 0.5 * jnp.sum(kin.G_v * (kin.G_M @ kin.G_v[:, :, None])[:, :, 0])


def potential_energy(model: Model, state: State, *, gravity: jax.Array | None = None) -> jax.Array:
    """``-m g . p_CoM`` [J] (zero at the world origin)."""
    dtype = model.link_mass.dtype
    g = kin_module.default_gravity(dtype) if gravity is None else jnp.asarray(gravity, dtype)
    return -model.total_mass * jnp.dot(g, com_position(model, state))


def mechanical_energy(model: Model, state: State, *, gravity: jax.Array | None = None) -> jax.Array:
    """Kinetic plus potential energy [J]."""
    return kinetic_energy(model, state) + potential_energy(model, state, gravity=gravity)

