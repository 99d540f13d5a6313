"""Forward kinematics and the world-frame quantities shared by the dynamics algorithms.

Poses are composed level by level (one batched product per tree depth, so the graph grows with
the depth, not the number of links). Everything else is written in the inertial (world) frame,
where the motion of link ``i`` is the sum of its ancestors' joint motions: those sums are one
product with the static ancestor matrix of the tree, with no recursion at all.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import levels
from . import representations as rep
from . import spatial
from .model import Model, topology
from .state import State

STANDARD_GRAVITY = 9.81


def default_gravity(dtype) -> jax.Array:
    """``(3,)`` gravity [m/s^2] along -z."""
    return jnp.array([0.0, 0.0, -STANDARD_GRAVITY], dtype=dtype)


def to_link_order(model: Model, joint_values: jax.Array) -> jax.Array:
    """``(N, ...)`` per-link values from ``(n, ...)`` per-joint ones; the root gets zero."""
    link_joint = topology(model.parent, model.joint_link).link_joint
    padded = jnp.concatenate([jnp.zeros_like(joint_values[:1]), joint_values]) if model.dofs else jnp.zeros(
        (1,) + joint_values.shape[1:], joint_values.dtype
    )
    return padded[link_joint + 1]


def to_joint_order(model: Model, link_values: jax.Array) -> jax.Array:
    """``(n, ...)`` per-joint values from ``(N, ...)`` per-link ones."""
    return link_values[np.asarray(model.joint_link, dtype=int)]


def joint_transforms(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``P_H_C(q) (N, 4, 4)``: each link in its parent at the given joint positions ``(n,)``."""
    q = to_link_order(model, joint_positions)
    revolute = np.asarray(model.joint_type) == 1
    prismatic = np.asarray(model.joint_type) == 2
    axis, point = model.joint_axis, model.joint_axis_point
    K = spatial.skew(axis)
    s, c = jnp.sin(q)[:, None, None], jnp.cos(q)[:, None, None]
    R_rev = jnp.eye(3, dtype=q.dtype) + s * K + (1 - c) * (K @ K)
    t_rev = point - (R_rev @ point[:, :, None])[:, :, 0]
    R = jnp.where(revolute[:, None, None], R_rev, jnp.eye(3, dtype=q.dtype))
    t = jnp.where(revolute[:, None], t_rev, 0.0) + jnp.where(prismatic[:, None], axis * q[:, None], 0.0)
    return model.joint_transform @ spatial.transform(R, t)


def forward_kinematics(model: Model, state: State) -> jax.Array:
    """``W_H_L (N, 4, 4)``: the pose of every link in the world frame."""
    return link_poses(model, state.base_transform, state.joint_positions)


def link_poses(model: Model, W_H_B: jax.Array, joint_positions: jax.Array) -> jax.Array:
    """``W_H_L (N, 4, 4)`` from the base pose ``W_H_B (4, 4)`` and joint positions ``(n,)``."""
    P_H_C = levels.to_grid(model, joint_transforms(model, joint_positions), jnp.eye(4))
    root_row = jnp.zeros_like(P_H_C[0]).at[0].set(W_H_B)

    def step(W_H_parents, P_H_C_row):
        row = W_H_parents @ P_H_C_row
        return row, row

    rows = levels.scan_down(model, step, root_row, P_H_C[1:])
    return levels.from_grid(model, jnp.concatenate([root_row[None], rows]))


def frame_poses(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_H_F (F, 4, 4)`` of every frame from the link poses."""
    return W_H_L[np.asarray(model.frame_link, dtype=int)] @ model.frame_transform


def world_motion_subspaces(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_S (N, 6)``: the world-frame motion of each link per unit velocity of its joint (root: 0)."""
    R, o = W_H_L[:, :3, :3], W_H_L[:, :3, 3]
    W_axis = (R @ model.joint_axis[:, :, None])[:, :, 0]
    W_point = (R @ model.joint_axis_point[:, :, None])[:, :, 0] + o
    revolute = np.asarray(model.joint_type)[:, None] == 1
    prismatic = np.asarray(model.joint_type)[:, None] == 2
    linear = jnp.where(revolute, jnp.cross(W_point, W_axis), 0.0) + jnp.where(prismatic, W_axis, 0.0)
    angular = jnp.where(revolute, W_axis, 0.0)
    return jnp.concatenate([linear, angular], axis=-1)


def world_inertias(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_M (N, 6, 6)``: each link's 6D inertia about the world origin, world axes."""
    R = W_H_L[:, :3, :3]
    W_com = (R @ model.link_com[:, :, None])[:, :, 0] + W_H_L[:, :3, 3]
    return spatial.spatial_inertia(model.link_mass, W_com, R @ model.link_inertia @ jnp.swapaxes(R, -1, -2))


def ancestors_sum(model: Model, link_values: jax.Array) -> jax.Array:
    """``out[i] = sum of link_values[k]`` over ``k`` ancestor of ``i`` or ``i`` itself: ``(N, d)``."""
    subtree = topology(model.parent, model.joint_link).subtree
    return jnp.asarray(subtree.T, dtype=link_values.dtype) @ link_values


def subtree_sum(model: Model, link_values: jax.Array) -> jax.Array:
    """``out[i] = sum of link_values[k]`` over ``k`` in the subtree of ``i``: ``(N, ...)``."""
    subtree = jnp.asarray(topology(model.parent, model.joint_link).subtree, dtype=link_values.dtype)
    flat = link_values.reshape(link_values.shape[0], -1)
    return (subtree @ flat).reshape(link_values.shape)


class Kinematics(NamedTuple):
    """World-frame kinematics of a state (link order, inertial representation).

    ``W_H_L (N, 4, 4)``, ``W_S (N, 6)`` joint motion subspaces, ``W_M (N, 6, 6)`` inertias,
    ``W_v (N, 6)`` link velocities, ``qd (N,)`` joint velocities per link, ``W_v_B (6,)``.
    """

    W_H_L: jax.Array
    W_S: jax.Array
    W_M: jax.Array
    W_v: jax.Array
    qd: jax.Array
    W_v_B: jax.Array


def base_velocity_inertial(model: Model, state: State, W_H_B: jax.Array) -> jax.Array:
    """``W_v_WB (6,)`` of the state's base velocity (zero with a fixed base)."""
    if not model.floating_base:
        return jnp.zeros(6, dtype=W_H_B.dtype)
    return rep.velocity_to_inertial(state.base_velocity, W_H_B, state.velocity_representation)


def kinematics(model: Model, state: State) -> Kinematics:
    """The :class:`Kinematics` of ``state``."""
    W_H_L = forward_kinematics(model, state)
    W_S = world_motion_subspaces(model, W_H_L)
    qd = to_link_order(model, state.joint_velocities)
    W_v_B = base_velocity_inertial(model, state, W_H_L[0])
    W_v = W_v_B + ancestors_sum(model, W_S * qd[:, None])
    return Kinematics(W_H_L=W_H_L, W_S=W_S, W_M=world_inertias(model, W_H_L), W_v=W_v, qd=qd, W_v_B=W_v_B)


def link_accelerations_inertial(model: Model, kin: Kinematics, W_a_B: jax.Array, joint_accelerations: jax.Array) -> jax.Array:
    """``d/dt W_v (N, 6)`` of every link from the base's ``W_a_B (6,)`` and ``qdd (n,)``."""
    qdd = to_link_order(model, joint_accelerations)
    terms = kin.W_S * qdd[:, None] + spatial.cross_motion(kin.W_v, kin.W_S * kin.qd[:, None])
    return W_a_B + ancestors_sum(model, terms)


def base_acceleration_inertial(model: Model, state: State, kin: Kinematics, base_acceleration: jax.Array | None, representation: str) -> jax.Array:
    """``d/dt W_v_WB (6,)`` from a base acceleration in ``representation`` (None: zero in that representation)."""
    if not model.floating_base:
        return jnp.zeros(6, dtype=kin.W_H_L.dtype)
    a = jnp.zeros(6, dtype=kin.W_H_L.dtype) if base_acceleration is None else jnp.asarray(base_acceleration, kin.W_H_L.dtype)
    return rep.acceleration_to_inertial(a, kin.W_H_L[0], kin.W_v_B, representation)


def with_velocity_representation(model: Model, state: State, velocity_representation: str) -> State:
    """The same physical state with its base velocity written in another representation."""
    W_H_B = state.base_transform
    W_v_B = base_velocity_inertial(model, state, W_H_B)
    base_velocity = rep.velocity_from_inertial(W_v_B, W_H_B, velocity_representation)
    return state.replace(base_velocity=base_velocity, velocity_representation=velocity_representation)
