"""Forward kinematics and the world-frame quantities shared by the dynamics algorithms.

Poses are composed level by level, one traversal over the depth levels of the tree (see
:mod:`.levels`), so the graph does not grow with the number of links. Everything
is written in the inertial (world) frame, where the motion of link ``i`` is the sum of its
ancestors' joint motions: accelerations and the sums of RNEA and CRBA are products with the
static ancestor matrix of the tree, with no recursion at all.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import configuration, levels
from . import representations as rep
from . import spatial
from .model import JointKind, Model, topology
from .state import State

STANDARD_GRAVITY = 9.81


def default_gravity(dtype) -> jax.Array:
    """``(3,)`` gravity [m/s^2] along -z."""
    return jnp.array([0.0, 0.0, -STANDARD_GRAVITY], dtype=dtype)


def to_link_order(model: Model, joint_values: jax.Array) -> jax.Array:
    """``(N, ...)`` per-link values from ``(n, ...)`` per-joint ones; the root gets zero."""
    link_joint = topology(model.parent, model.joint_link).link_joint
    padded = jnp.concatenate([jnp.zeros((1,) + joint_values.shape[1:], joint_values.dtype), joint_values])
    return padded[link_joint + 1]


def to_joint_order(model: Model, link_values: jax.Array) -> jax.Array:
    """``(n, ...)`` per-joint values from ``(N, ...)`` per-link ones."""
    return link_values[np.asarray(model.joint_link, dtype=int)]


def joint_transforms(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``P_H_C(q) (N, 4, 4)``: each link in its parent at the given joint positions ``(nq,)``.

    ``P_H_C(q) = P_H_C0 @ (I + G(q))`` with ``G(q) = [R(q) - I, (I - R(q)) p; 0, 0]`` for a
    revolute joint (Rodrigues: ``R(q) - I = sin(q) K + (1 - cos(q)) K^2``, ``K`` the cross-product
    matrix of the axis, ``p`` a point on it) and ``[0, q a; 0, 0]`` for a prismatic one along ``a``;
    a screw joint of pitch ``h`` is a revolute one with ``q h a`` added to the translation.
    Everything is elementwise (``K^2 = a a^T - |a|^2 I``), so XLA computes all links in one kernel.
    A ball joint's first link turns by its quaternion's ``R`` about the anchor ``p``: ``G = [R - I,
    (I - R) p; 0, 0]``; its other two links stay where their zero pose puts them (identity).
    """
    q = to_link_order(model, configuration.scalar_positions(model, joint_positions))[:, None]
    kinds = np.asarray(model.joint_type)
    revolute = jnp.asarray(np.isin(kinds, (JointKind.REVOLUTE, JointKind.SCREW)))[:, None]
    prismatic = jnp.asarray(kinds == JointKind.PRISMATIC)[:, None]
    a, point = model.joint_axis, model.joint_axis_point
    K = spatial.skew(a)
    K2 = a[:, :, None] * a[:, None, :] - spatial.dot(a, a)[:, None, None] * jnp.eye(3, dtype=a.dtype)
    Kp = jnp.cross(a, point)
    sine, one_minus_cosine = jnp.where(revolute, jnp.sin(q), 0.0), jnp.where(revolute, 1 - jnp.cos(q), 0.0)
    rotation = sine[:, :, None] * K + one_minus_cosine[:, :, None] * K2
    translation = jnp.where(prismatic, q * a, 0.0) - sine * Kp - one_minus_cosine * jnp.cross(a, Kp)
    screw = kinds == JointKind.SCREW
    if screw.any():
        translation = translation + jnp.where(jnp.asarray(screw)[:, None], q * model.joint_pitch[:, None] * a, 0.0)
    G = jnp.concatenate([rotation, translation[:, :, None]], axis=-1)
    if model.ball_dofs:
        G = G.at[_ball_links(model)].set(_ball_motions(model, joint_positions))
    return model.joint_transform + spatial.matmul(model.joint_transform[:, :, :3], G)


def _ball_links(model: Model) -> np.ndarray:
    """``(b,)``: the first link (the one the quaternion turns) of each ball joint."""
    return np.asarray(model.joint_link, dtype=int)[np.asarray(model.ball_dofs, dtype=int)]


def _ball_motions(model: Model, joint_positions: jax.Array) -> jax.Array:
    """``G (b, 3, 4)`` of each ball joint: ``[R - I, (I - R) p]`` for its quaternion's ``R`` about its anchor ``p``."""
    R = spatial.quaternion_to_rotation(configuration.ball_quaternions(model, joint_positions))
    point = model.joint_axis_point[_ball_links(model)]
    eye = jnp.eye(3, dtype=R.dtype)
    return jnp.concatenate([R - eye, (point - spatial.rotate(R, point))[:, :, None]], axis=-1)


def forward_kinematics(model: Model, state: State) -> jax.Array:
    """``W_H_L (N, 4, 4)``: the pose of every link in the world frame."""
    return link_poses(model, state.base_transform, state.joint_positions)


def link_poses(model: Model, W_H_B: jax.Array, joint_positions: jax.Array) -> jax.Array:
    """``W_H_L (N, 4, 4)`` from the base pose ``W_H_B (4, 4)`` and joint positions ``(n,)``."""

    def step(W_H_parents, P_H_C):
        W_H_C = W_H_parents @ P_H_C
        return W_H_C, W_H_C

    return levels.scan_down(model, step, W_H_B[None], W_H_B[None], joint_transforms(model, joint_positions))


def frame_poses(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_H_F (F, 4, 4)`` of every frame from the link poses."""
    return W_H_L[np.asarray(model.frame_link, dtype=int)] @ model.frame_transform


def _motion_subspaces(W_H: jax.Array, axis: jax.Array, point: jax.Array, pitch: jax.Array, joint_type: np.ndarray) -> jax.Array:
    """World motion subspaces ``(..., 6)`` of joints with the given axes, points and pitches
    ``(...)`` [m/rad] in the moved frames ``W_H (..., 4, 4)`` and static :class:`.model.JointKind`
    codes ``joint_type (...)``."""
    R, o = W_H[..., :3, :3], W_H[..., :3, 3]
    W_axis = spatial.rotate(R, axis)
    kinds = np.asarray(joint_type)
    revolute = np.isin(kinds, (JointKind.REVOLUTE, JointKind.BALL_ROTATION, JointKind.SCREW))[..., None]
    prismatic = (kinds == JointKind.PRISMATIC)[..., None]
    screw = (kinds == JointKind.SCREW)[..., None]
    linear = jnp.zeros_like(W_axis)
    if revolute.any():
        linear = jnp.where(revolute, jnp.cross(spatial.rotate(R, point) + o, W_axis), linear)
    if prismatic.any():
        linear = jnp.where(prismatic, W_axis, linear)
    if screw.any():
        linear = linear + jnp.where(screw, pitch[..., None] * W_axis, 0.0)
    return jnp.concatenate([linear, jnp.where(revolute, W_axis, 0.0)], axis=-1)


def _world_inertias(mass: jax.Array, com: jax.Array, inertia: jax.Array, W_H: jax.Array) -> jax.Array:
    """6D inertias ``(..., 6, 6)`` about the world origin of bodies with frames ``W_H (..., 4, 4)``."""
    R = W_H[..., :3, :3]
    return spatial.spatial_inertia(mass, spatial.rotate(R, com) + W_H[..., :3, 3], spatial.congruence(R, inertia))


def world_motion_subspaces(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_S (N, 6)``: the world-frame motion of each link per unit velocity of its joint (root: 0)."""
    return _motion_subspaces(W_H_L, model.joint_axis, model.joint_axis_point, model.joint_pitch, np.asarray(model.joint_type))


def world_inertias(model: Model, W_H_L: jax.Array) -> jax.Array:
    """``W_M (N, 6, 6)``: each link's 6D inertia about the world origin, world axes."""
    return _world_inertias(model.link_mass, model.link_com, model.link_inertia, W_H_L)


def velocity_products(model: Model, G_v: jax.Array, G_S: jax.Array, qd: jax.Array) -> jax.Array:
    """``c (N, 6)``: the bias acceleration ``v_i x S_i qd_i`` of each link's joint (``S_i`` moves with the link).

    The three rotations of a ball joint are about axes fixed in its child, so each takes the
    velocity of the ball's parent: ``v_P x S omega``, which equals ``v_C x S omega`` for the
    child's ``v_C = v_P + S omega``. (The chained links' own velocities would add the products
    of one rotation with the next, those of a gimbal, not of a ball.)"""
    anchor = _product_links(model.parent, model.joint_link, model.ball_dofs, bool(jax.config.jax_enable_x64))
    v = G_v if anchor is None else G_v[anchor]
    return spatial.cross_motion(v, G_S * qd[:, None])


@functools.lru_cache(maxsize=256)
def _product_links(parent: tuple[int, ...], joint_link: tuple[int, ...], ball_dofs: tuple[int, ...], x64: bool) -> np.ndarray | None:
    """Per link, the link whose velocity its joint's bias product takes (None: each its own);
    cached per JAX x64 mode (see :func:`.model.topology`)."""
    del x64
    if not ball_dofs:
        return None
    anchor = np.arange(len(parent))
    for start in ball_dofs:
        anchor[[joint_link[start + k] for k in range(3)]] = parent[joint_link[start]]
    return anchor


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
    """Kinematics of a state in the internal frame ``G`` (world axes, origin at the base, so that
    nothing grows with the distance from the world origin), per link ``(N, ...)``.

    Poses ``G_H_L (N, 4, 4)``, joint motion subspaces ``G_S (N, 6)`` (root: 0), 6D inertias
    ``G_M (N, 6, 6)``, inertial link velocities ``G_v (N, 6)``, joint velocities per link ``qd
    (N,)``, the base velocity ``G_v_B (6,)``, and ``origin (3,)``: the world position of ``G``'s
    origin (``W_H_L`` is ``G_H_L`` with ``origin`` added to its translations).
    """

    G_v_B: jax.Array
    G_H_L: jax.Array
    G_S: jax.Array
    G_M: jax.Array
    G_v: jax.Array
    qd: jax.Array
    origin: jax.Array


def base_velocity_inertial(model: Model, state: State, W_H_B: jax.Array, origin: jax.Array | None = None) -> jax.Array:
    """``G_v_WB (6,)`` of the state's base velocity (zero with a fixed base); ``W_H_B`` is ``G_H_B``."""
    if not model.floating_base:
        return jnp.zeros(6, dtype=W_H_B.dtype)
    return rep.velocity_to_inertial(state.base_velocity, W_H_B, state.velocity_representation, origin)


def internal_base_pose(state: State) -> tuple[jax.Array, jax.Array]:
    """``G_H_B (4, 4)`` (the base orientation, at the origin) and ``origin = W_o_B (3,)``."""
    return spatial.pose_to_transform(jnp.zeros_like(state.base_position), state.base_quaternion), state.base_position


def kinematics(model: Model, state: State) -> Kinematics:
    """The :class:`Kinematics` of ``state``: the poses from one traversal of the levels, then the
    motion subspaces, inertias and velocities of all links at once (a link's velocity is the sum
    of its ancestors' joint motions)."""
    G_H_B, origin = internal_base_pose(state)
    G_v_B = base_velocity_inertial(model, state, G_H_B, origin)
    qd = to_link_order(model, state.joint_velocities)
    G_H_L = link_poses(model, G_H_B, state.joint_positions)
    G_S = world_motion_subspaces(model, G_H_L)
    return Kinematics(
        G_v_B=G_v_B,
        G_H_L=G_H_L,
        G_S=G_S,
        G_M=world_inertias(model, G_H_L),
        G_v=G_v_B + ancestors_sum(model, G_S * qd[:, None]),
        qd=qd,
        origin=origin,
    )


def link_accelerations_inertial(model: Model, kin: Kinematics, W_a_B: jax.Array, joint_accelerations: jax.Array) -> jax.Array:
    """``d/dt W_v (N, 6)`` of every link from the base's ``W_a_B (6,)`` and ``qdd (n,)``."""
    qdd = to_link_order(model, joint_accelerations)
    terms = kin.G_S * qdd[:, None] + velocity_products(model, kin.G_v, kin.G_S, kin.qd)
    return W_a_B + ancestors_sum(model, terms)


def base_acceleration_inertial(model: Model, state: State, kin: Kinematics, base_acceleration: jax.Array | None, representation: str) -> jax.Array:
    """``d/dt G_v_WB (6,)`` from a base acceleration in ``representation`` (None: zero in that representation)."""
    if not model.floating_base:
        return jnp.zeros(6, dtype=kin.G_H_L.dtype)
    a = jnp.zeros(6, dtype=kin.G_H_L.dtype) if base_acceleration is None else jnp.asarray(base_acceleration, kin.G_H_L.dtype)
    return rep.acceleration_to_inertial(a, kin.G_H_L[0], kin.G_v_B, representation, kin.origin)


def with_velocity_representation(model: Model, state: State, velocity_representation: str) -> State:
    """The same physical state with its base velocity written in another representation."""
    G_H_B, origin = internal_base_pose(state)
    G_v_B = base_velocity_inertial(model, state, G_H_B, origin)
    base_velocity = rep.velocity_from_inertial(G_v_B, G_H_B, velocity_representation, origin)
    return state.replace(base_velocity=base_velocity, velocity_representation=velocity_representation)
