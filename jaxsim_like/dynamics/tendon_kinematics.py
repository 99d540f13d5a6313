"""The lengths of a model's tendons at a state and their rates' rows, fixed and spatial alike.

A spatial tendon's length is the sum over its segments (:class:`.tendons.TendonPaths`) of
``s |p_b - p_a|`` with ``p_a, p_b`` the origins of its sites' frames and ``s`` the segment's
scale. With ``u = (p_b - p_a) / |p_b - p_a|``, its rate is ``sum s u . (v_b - v_a)``: the
velocities of the material points at ``p_b`` and ``p_a`` of their links, each the dot of the
unit wrench ``[u; p x u]`` (world axes, about ``G``'s origin) with the link's spatial velocity. A
row ``dL/dq`` is therefore a set of link wrenches: each joint's motion subspace dotted with the
wrenches on the links it moves. A tendon's sites are on one tree (the loader refuses others),
so its length does not change as the whole tree moves: a floating base has no column in its
row. A force ``f`` along the tendon pulls each site towards its neighbours on the path, ``f s
u`` at ``p_a``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import spatial
from .kinematics import Kinematics, kinematics, subtree_sum, to_joint_order
from .model import Model
from .state import State


class TendonKinematics(NamedTuple):
    """The ``t`` tendons at a state: ``length (t,)`` [m] and ``joints (t, n)``, the rows ``dL/dq``
    of their rates ``L_dot = joints @ q_dot`` (MuJoCo's ``ten_J``, whose free-joint columns are
    zero)."""

    length: jax.Array
    joints: jax.Array


def _segment_wrenches(model: Model, G_H_L: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The segments' scaled lengths ``(s,)`` [m] and the unit wrenches ``(s, 2, 6)`` of their rates
    on the links of their two ends (``a``, then ``b``; world axes, about ``G``'s origin)."""
    paths = model.tendons.paths
    dtype = G_H_L.dtype
    names = list(model.frame_names)
    ends = []
    for frames in (paths.frame_a, paths.frame_b):
        index = np.asarray([names.index(frame) for frame in frames], dtype=int)
        links = np.asarray(model.frame_link, dtype=int)[index]
        L_p = model.frame_transform[index, :3, 3].astype(dtype)
        ends.append(spatial.rotate(G_H_L[links, :3, :3], L_p) + G_H_L[links, :3, 3])
    p_a, p_b = ends
    scale = paths.scale.astype(dtype)
    difference = p_b - p_a
    distance = spatial.safe_norm(difference)
    # Two sites at one point: no direction, no rate (MuJoCo's as well).
    u = difference / jnp.where(distance > 0, distance, 1.0)[:, None]
    u = scale[:, None] * u
    wrench_a = -jnp.concatenate([u, jnp.cross(p_a, u)], axis=-1)
    wrench_b = jnp.concatenate([u, jnp.cross(p_b, u)], axis=-1)
    return scale * distance, jnp.stack([wrench_a, wrench_b], axis=1)


def _path_link_wrenches(model: Model, G_H_L: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The lengths of the tendons' paths ``(t,)`` [m] (zero for fixed tendons) and the unit
    wrenches of their rates on every link ``(t, N, 6)`` (world axes, about ``G``'s origin), at
    the link poses ``G_H_L (N, 4, 4)``."""
    tendons, paths = model.tendons, model.tendons.paths
    dtype = G_H_L.dtype
    count, links = tendons.count, model.number_of_links
    if not paths.count:
        return jnp.zeros(count, dtype), jnp.zeros((count, links, 6), dtype)
    lengths, wrenches = _segment_wrenches(model, G_H_L)
    frame_link = np.asarray(model.frame_link, dtype=int)
    names = list(model.frame_names)
    link_a = frame_link[[names.index(frame) for frame in paths.frame_a]]
    link_b = frame_link[[names.index(frame) for frame in paths.frame_b]]
    tendon = np.asarray(paths.tendon, dtype=int)
    per_tendon = jnp.zeros(count, dtype).at[tendon].add(lengths)
    link_wrenches = jnp.zeros((count, links, 6), dtype).at[tendon, link_a].add(wrenches[:, 0]).at[tendon, link_b].add(wrenches[:, 1])
    return per_tendon, link_wrenches


def tendon_kinematics(model: Model, kin: Kinematics, joint_positions: jax.Array) -> TendonKinematics:
    """The :class:`TendonKinematics` of ``model``'s tendons at the kinematics ``kin`` of a state of
    ``joint_positions (n,)``."""
    tendons = model.tendons
    dtype = kin.G_H_L.dtype
    C = tendons.coefficients.astype(dtype)
    length = tendons.length0.astype(dtype) + C @ joint_positions
    if not tendons.paths.count:
        return TendonKinematics(length, C)
    path_lengths, link_wrenches = _path_link_wrenches(model, kin.G_H_L)
    # The wrenches on each link and its descendants, dotted with its joint's motion subspace.
    below = subtree_sum(model, jnp.swapaxes(link_wrenches, 0, 1))  # (N, t, 6)
    joints = to_joint_order(model, jnp.einsum("ltk,lk->lt", below, kin.G_S)).T
    return TendonKinematics(length + path_lengths, C + joints)


def tendon_joint_torques(model: Model, state: State, forces: jax.Array) -> jax.Array:
    """``J^T f (n,)`` [N m or N]: the joint torques of ``forces (t,)`` [N] along ``model``'s
    tendons at ``state`` (``J = dL/dq``; a positive force lengthens its tendon)."""
    forces = jnp.asarray(forces, state.joint_positions.dtype)
    if forces.shape != (model.tendons.count,):
        raise ValueError(f"tendon_forces must have shape ({model.tendons.count},) for model {model.name!r}, got {tuple(forces.shape)}")
    if not model.tendons.paths.count:
        return forces @ model.tendons.coefficients.astype(forces.dtype)
    kin = kinematics(model, state)
    return forces @ tendon_kinematics(model, kin, state.joint_positions).joints
