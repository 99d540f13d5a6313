"""Link and frame velocities, accelerations, Jacobians and bias accelerations ``J_dot nu``.

A Jacobian ``J (6, nv)`` in a representation maps ``nu = [base velocity; joint velocities]``,
with the base velocity in that representation, to the link's velocity in that same
representation: body ``L_v_WL``, inertial ``W_v_WL`` or mixed ``L[W]_v_WL``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import kinematics as kin_module
from . import representations as rep
from .model import Model, topology
from .state import State, check_representation


def _representation(state: State, velocity_representation: str | None) -> str:
    return check_representation(velocity_representation or state.velocity_representation)


def _inertial_jacobians(model: Model, W_H_L: jax.Array, W_S: jax.Array, representation: str) -> jax.Array:
    """``(N, 6, nv)``: ``W_v_WL`` per unit of ``nu`` whose base part is in ``representation``."""
    support = jnp.asarray(topology(model.parent, model.joint_link).support, dtype=W_S.dtype)
    joints = np.asarray(model.joint_link, dtype=int)
    J_q = support[:, None, :] * W_S[joints].T[None, :, :]
    if not model.floating_base:
        return J_q
    X = rep.to_inertial_transform(W_H_L[0], representation)
    return jnp.concatenate([jnp.broadcast_to(X, (model.number_of_links, 6, 6)), J_q], axis=-1)


def link_jacobians(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``J (N, 6, nv)`` of every link."""
    representation = _representation(state, velocity_representation)
    W_H_L = kin_module.forward_kinematics(model, state)
    W_J = _inertial_jacobians(model, W_H_L, kin_module.world_motion_subspaces(model, W_H_L), representation)
    return rep.from_inertial_transform(W_H_L, representation) @ W_J


def jacobian(model: Model, state: State, link: int | str, *, velocity_representation: str | None = None) -> jax.Array:
    """``J (6, nv)`` of one link, by index or name."""
    index = model.link_index(link) if isinstance(link, str) else int(link)
    return link_jacobians(model, state, velocity_representation=velocity_representation)[index]


def frame_jacobian(model: Model, state: State, frame: int | str, *, velocity_representation: str | None = None) -> jax.Array:
    """``J (6, nv)`` of a frame (a lumped link or an SDF ``<frame>``), by index or name."""
    representation = _representation(state, velocity_representation)
    index = model.frame_index(frame) if isinstance(frame, str) else int(frame)
    W_H_L = kin_module.forward_kinematics(model, state)
    link = model.frame_link[index]
    W_J = _inertial_jacobians(model, W_H_L, kin_module.world_motion_subspaces(model, W_H_L), representation)[link]
    W_H_F = W_H_L[link] @ model.frame_transform[index]
    return rep.from_inertial_transform(W_H_F, representation) @ W_J


def link_velocities(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``(N, 6)`` velocity of every link in ``velocity_representation``."""
    representation = _representation(state, velocity_representation)
    kin = kin_module.kinematics(model, state)
    return rep.velocity_from_inertial(kin.G_v, kin.G_H_L, representation, kin.origin)


def link_accelerations(
    model: Model,
    state: State,
    *,
    base_acceleration: jax.Array | None = None,
    joint_accelerations: jax.Array | None = None,
    velocity_representation: str | None = None,
) -> jax.Array:
    """``(N, 6)`` derivative of every link's velocity in ``velocity_representation``, for the given
    derivative of the base velocity ``(6,)`` (same representation) and joint accelerations ``(n,)``."""
    representation = _representation(state, velocity_representation)
    kin = kin_module.kinematics(model, state)
    dtype = kin.G_H_L.dtype
    qdd = jnp.zeros(model.dofs, dtype) if joint_accelerations is None else jnp.asarray(joint_accelerations, dtype)
    W_a_B = kin_module.base_acceleration_inertial(model, state, kin, base_acceleration, representation)
    W_a = kin_module.link_accelerations_inertial(model, kin, W_a_B, qdd)
    return rep.acceleration_from_inertial(W_a, kin.G_H_L, kin.G_v, representation, kin.origin)


def link_bias_accelerations(model: Model, state: State, *, velocity_representation: str | None = None) -> jax.Array:
    """``J_dot nu (N, 6)`` of every link: its acceleration at zero ``nu_dot`` (same representation)."""
    return link_accelerations(model, state, velocity_representation=velocity_representation)


def frame_bias_acceleration(model: Model, state: State, frame: int | str, *, velocity_representation: str | None = None) -> jax.Array:
    """``J_dot nu (6,)`` of a frame."""
    representation = _representation(state, velocity_representation)
    index = model.frame_index(frame) if isinstance(frame, str) else int(frame)
    kin = kin_module.kinematics(model, state)
    link = model.frame_link[index]
    W_a_B = kin_module.base_acceleration_inertial(model, state, kin, None, representation)
    W_a = kin_module.link_accelerations_inertial(model, kin, W_a_B, jnp.zeros(model.dofs, kin.G_H_L.dtype))[link]
    W_H_F = kin.G_H_L[link] @ model.frame_transform[index]
    return rep.acceleration_from_inertial(W_a, W_H_F, kin.G_v[link], representation, kin.origin)
