"""The lengths of a model's tendons at a state and their rates' rows, fixed and spatial alike.

A spatial tendon's length is the sum over its segments (:class:`.tendons.TendonPaths`) of
``s |p_b - p_a|`` with ``p_a, p_b`` the origins of its sites' frames and ``s`` the segment's
scale; around a sphere or a cylinder (:mod:`.tendon_wraps`), ``s (|t0 - p_a| + arc + |p_b -
t1|)`` through the tangent points ``t0, t1``. With ``u = (p_b - p_a) / |p_b - p_a|``, a straight
segment's rate is ``s u . (v_b - v_a)``: the velocities of the material points at ``p_b`` and
``p_a`` of their links, each the dot of the unit wrench ``[u; p x u]`` (world axes, about
``G``'s origin) with the link's spatial velocity; a wrapped one's is that of its straight pieces
``p_a -> t0`` and ``t1 -> p_b``, the tangent points moving with the shape's link (MuJoCo's rows).
A row ``dL/dq`` is therefore a set of link wrenches: each joint's motion subspace dotted with
the wrenches on the links it moves. A tendon's sites are on one tree (the loader refuses
others), so its length does not change as the whole tree moves: a floating base has no column
in its row. A force ``f`` along the tendon pulls each site towards its neighbours on the path,
``f s u`` at ``p_a``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import configuration, spatial
from .kinematics import Kinematics, kinematics, subtree_sum, to_joint_order
from .model import Model
from .state import State
from .tendon_wraps import wrap_segments


class TendonKinematics(NamedTuple):
    """The ``t`` tendons at a state: ``length (t,)`` [m] and ``joints (t, n)``, the rows ``dL/dq``
    of their rates ``L_dot = joints @ q_dot`` (MuJoCo's ``ten_J``, whose free-joint columns are
    zero)."""

    length: jax.Array
    joints: jax.Array


def _unit(vector: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(w, 3)`` unit vectors (zero for a zero vector: two sites at one point have no direction,
    no rate, in MuJoCo as well) and the lengths ``(w,)``."""
    size = spatial.safe_norm(vector)
    return vector / jnp.where(size > 0, size, 1.0)[:, None], size


def _unit_wrench(u: jax.Array, p: jax.Array) -> jax.Array:
    """``(w, 6)``: the wrench ``[u; p x u]`` of the unit forces ``u`` at the points ``p`` ``(w, 3)``."""
    return jnp.concatenate([u, jnp.cross(p, u)], axis=-1)


def _place(model: Model, G_H_L: jax.Array, name: str) -> tuple[int, jax.Array]:
    """The link of the link or frame called ``name`` and that frame's pose in it ``(4, 4)``."""
    if name in model.link_names:
        return model.link_names.index(name), jnp.eye(4, dtype=G_H_L.dtype)
    f = list(model.frame_names).index(name)
    return int(model.frame_link[f]), model.frame_transform[f].astype(G_H_L.dtype)


def _segment_wrenches(model: Model, G_H_L: jax.Array) -> tuple[jax.Array, np.ndarray, np.ndarray, jax.Array]:
    """The segments' scaled lengths ``(s,)`` [m] and the unit wrenches of their rates on links:
    ``k`` entries of static segments ``(k,)`` and links ``(k,)`` with their wrenches ``(k, 6)``
    (world axes, about ``G``'s origin): each segment's ends, and the shape's link at the tangent
    points of a wrapped one (MuJoCo's rows: the arc, on one body, adds none)."""
    paths = model.tendons.paths
    dtype = G_H_L.dtype
    names = list(model.frame_names)
    ends, links = [], []
    for frames in (paths.frame_a, paths.frame_b):
        index = np.asarray([names.index(frame) for frame in frames], dtype=int)
        link = np.asarray(model.frame_link, dtype=int)[index]
        L_p = model.frame_transform[index, :3, 3].astype(dtype)
        ends.append(spatial.rotate(G_H_L[link, :3, :3], L_p) + G_H_L[link, :3, 3])
        links.append(link)
    p_a, p_b = ends
    scale = paths.scale.astype(dtype)[:, None]
    first, length = _unit(p_b - p_a)
    last = first
    segments = [np.arange(paths.count)] * 2
    entries = [links[0], links[1]]
    wrapping = np.flatnonzero([kind != "" for kind in paths.wrap_kind])
    extra = []
    if wrapping.size:
        placed = [_place(model, G_H_L, paths.wrap_body[k]) for k in wrapping]
        wrap_link = np.asarray([link for link, _ in placed], dtype=int)
        L_H_B = jnp.stack([pose for _, pose in placed])
        G_H_W = jnp.matmul(jnp.matmul(G_H_L[wrap_link], L_H_B), paths.wrap_pose[wrapping].astype(dtype))
        sphere = np.asarray([paths.wrap_kind[k] == "sphere" for k in wrapping])
        wraps, t0, t1, arc = wrap_segments(p_a[wrapping], p_b[wrapping], G_H_W, paths.wrap_radius[wrapping].astype(dtype), sphere)
        u0, before = _unit(t0 - p_a[wrapping])
        u1, after = _unit(p_b[wrapping] - t1)
        hit = wraps[:, None]
        first = first.at[wrapping].set(jnp.where(hit, u0, first[wrapping]))
        last = last.at[wrapping].set(jnp.where(hit, u1, last[wrapping]))
        length = length.at[wrapping].set(jnp.where(wraps, before + arc + after, length[wrapping]))
        on_shape = jnp.where(hit, _unit_wrench(u0, t0) - _unit_wrench(u1, t1), 0.0)
        segments.append(wrapping)
        entries.append(wrap_link)
        extra.append(scale[wrapping] * on_shape)
    wrenches = jnp.concatenate([-scale * _unit_wrench(first, p_a), scale * _unit_wrench(last, p_b)] + extra)
    return scale[:, 0] * length, np.concatenate(segments), np.concatenate(entries), wrenches


def _path_link_wrenches(model: Model, G_H_L: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The lengths of the tendons' paths ``(t,)`` [m] (zero for fixed tendons) and the unit
    wrenches of their rates on every link ``(t, N, 6)`` (world axes, about ``G``'s origin), at
    the link poses ``G_H_L (N, 4, 4)``."""
    tendons, paths = model.tendons, model.tendons.paths
    dtype = G_H_L.dtype
    count, links = tendons.count, model.number_of_links
    if not paths.count:
        return jnp.zeros(count, dtype), jnp.zeros((count, links, 6), dtype)
    lengths, segments, entries, wrenches = _segment_wrenches(model, G_H_L)
    tendon = np.asarray(paths.tendon, dtype=int)
    per_tendon = jnp.zeros(count, dtype).at[tendon].add(lengths)
    link_wrenches = jnp.zeros((count, links, 6), dtype).at[tendon[segments], entries].add(wrenches)
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
    return forces @ tendon_kinematics(model, kin, configuration.dof_positions(model, state.joint_positions)).joints
