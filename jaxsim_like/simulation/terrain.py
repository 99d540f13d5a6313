"""The terrain the soft contacts push against: a plane, a height function, and static boxes.

Every query returns, per point, a penetration depth ``(P,)`` [m] (positive inside, zero or
negative outside) and the outward unit normal ``(P, 3)`` of the surface nearest to the point.
A swept point (a ball of radius ``r`` around its centre ``p``) touches at ``p - r n``: its depth
is the centre's plus ``r`` (exact against a plane and a static box; to first order in the
slope under a height function), see :func:`touch`.

A static box's face that lies on or below the ground and faces into it (the bottom of a wall
standing on the floor) is no face a body can reach from outside: a point inside the box leaves it
by the nearest face that is not buried (:func:`_buried_faces`), the wall's side, never down
through its bottom into the ground (:func:`box_penetration`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import spatial
from ..pytree import pytree_dataclass
from .collision.geometry import unit


@pytree_dataclass(static=["height_function"])
class Terrain:
    """The ground ``{x : plane_normal . x <= plane_offset}`` (or, with ``height_function``, the
    region under ``z = height_function(x, y)``), plus static boxes (obstacles, steps).

    ``box_transforms (B, 4, 4)``: ``W_H_box``; ``box_half_extents (B, 3)`` [m].
    ``height_function(x, y) -> z`` must be written with ``jax.numpy``; its normal comes from
    automatic differentiation.
    """

    plane_normal: jax.Array
    plane_offset: jax.Array
    box_transforms: jax.Array
    box_half_extents: jax.Array
    height_function: Callable[[jax.Array, jax.Array], jax.Array] | None = None

    @staticmethod
    def plane(height: float = 0.0, normal=(0.0, 0.0, 1.0), *, point=None) -> "Terrain":
        """A plane with the given unit ``normal`` through ``point`` (default ``(0, 0, height)``)."""
        n = np.asarray(normal, dtype=float)
        if n.shape != (3,) or not np.isfinite(n).all() or np.linalg.norm(n) == 0:
            raise ValueError(f"normal must be a non-zero finite 3-vector, got {normal!r}")
        n = n / np.linalg.norm(n)
        p = np.array([0.0, 0.0, height]) if point is None else np.asarray(point, dtype=float)
        return Terrain(
            plane_normal=jnp.asarray(n),
            plane_offset=jnp.asarray(float(n @ p)),
            box_transforms=jnp.zeros((0, 4, 4)),
            box_half_extents=jnp.zeros((0, 3)),
        )

    @staticmethod
    def heightmap(height_function: Callable[[jax.Array, jax.Array], jax.Array]) -> "Terrain":
        """The region under ``z = height_function(x, y)`` (a jax.numpy function)."""
        return dataclasses.replace(Terrain.plane(), height_function=height_function)

    def with_boxes(self, transforms, half_extents) -> "Terrain":
        """This terrain plus static boxes ``W_H_box (B, 4, 4)`` of half extents ``(B, 3)`` [m]."""
        transforms = jnp.asarray(transforms, dtype=float).reshape(-1, 4, 4)
        half_extents = jnp.asarray(half_extents, dtype=float).reshape(-1, 3)
        if transforms.shape[0] != half_extents.shape[0]:
            raise ValueError("transforms and half_extents must describe the same number of boxes")
        return dataclasses.replace(
            self,
            box_transforms=jnp.concatenate([self.box_transforms, transforms]),
            box_half_extents=jnp.concatenate([self.box_half_extents, half_extents]),
        )

    @staticmethod
    def of(description, default: "Terrain | None" = None) -> "Terrain":
        """The terrain of a world file's static geometry ``description`` (a
        :class:`~jaxsim_like.parsers.description.TerrainDescription`, the ``terrain`` of
        ``load_world``'s description): its ground (``default`` where it has none, by default the
        plane z = 0) and its static boxes. None: ``default``."""
        base = Terrain.plane() if default is None else default
        if description is None:
            return base
        if description.ground_normal is not None:
            base = dataclasses.replace(Terrain.plane(normal=description.ground_normal, point=description.ground_point),
                                       box_transforms=base.box_transforms, box_half_extents=base.box_half_extents)
        if len(description.box_names) == 0:
            return base
        return base.with_boxes(description.box_transforms, description.box_half_extents)


def is_plane(ground: Terrain) -> bool:
    """Whether ``ground`` is its plane alone: no boxes, no height function (static)."""
    return ground.box_transforms.shape[0] == 0 and ground.height_function is None


def _ground(terrain: Terrain, points: jax.Array) -> tuple[jax.Array, jax.Array]:
    if terrain.height_function is None:
        n = terrain.plane_normal / spatial.safe_norm(terrain.plane_normal)
        return terrain.plane_offset - spatial.dot(points, n), jnp.broadcast_to(n, points.shape)

    def height(xy):
        return terrain.height_function(xy[0], xy[1])

    z, gradient = jax.vmap(jax.value_and_grad(height))(points[:, :2])
    normal = jnp.concatenate([-gradient, jnp.ones_like(z)[:, None]], axis=-1)
    normal = spatial.normalize(normal)
    return (z - points[:, 2]) * normal[:, 2], normal


BURIED_TOLERANCE = 1e-6
"""[m] A box's face whose corners lie no more than this above the ground lies on it (the
rounding of a box placed on the floor, in float32 too)."""

_CORNER_SIGNS = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
_FACE_CORNERS = np.stack([_CORNER_SIGNS.T == 1.0, _CORNER_SIGNS.T == -1.0])
"""``(2, 3, 8)``: the corners (of :data:`_CORNER_SIGNS`) on the + and the - face of each axis."""


def _buried_faces(terrain: Terrain) -> jax.Array:
    """``(B, 2, 3)``: of each static box, whether its + and its - face of each of its axes is
    buried: all its corners lie on or below the ground (within :data:`BURIED_TOLERANCE`) and its
    outward normal points into the ground at each of them (the bottom face of a box standing on
    the floor or sunk into it; never both faces of an axis)."""
    R = terrain.box_transforms[:, :3, :3]
    local = jnp.asarray(_CORNER_SIGNS, R.dtype)[None] * terrain.box_half_extents[:, None, :]
    corners = terrain.box_transforms[:, None, :3, 3] + jnp.einsum("bij,bcj->bci", R, local)
    depth, normal = _ground(terrain, corners.reshape(-1, 3))
    depth, normal = depth.reshape(corners.shape[:2]), normal.reshape(corners.shape)
    # (B, 3, 8): the part of each corner's ground normal along each box axis.
    along = jnp.einsum("bji,bcj->bic", R, normal)
    on_face = _FACE_CORNERS[None]
    buried = jnp.all(jnp.where(on_face, depth[:, None, None, :] >= -BURIED_TOLERANCE, True), axis=-1)
    into_ground = jnp.all(jnp.where(on_face, jnp.stack([along < 0, along > 0], axis=1), True), axis=-1)
    return buried & into_ground


def _box_surface(point: jax.Array, half_extents: jax.Array, buried_side: jax.Array) -> tuple[jax.Array, jax.Array]:
    """For a ``point (3,)`` in the frame of a box of ``half_extents (3,)`` whose ``buried_side
    (3,)`` (per axis, 1 where its + face is buried, -1 its - face, 0 neither; :func:`_buried_faces`):
    the outward normal ``(3,)`` by which the point leaves the box and its signed distance to the
    box [m]. Inside (negative), the distance to the nearest face (as :func:`.geometry.box_closest`)
    and the normal of the nearest face that is not buried: the point leaves by the face a body can
    reach, and as deep as it is in the box."""
    # Per axis, not reduced over the axes: the step's cost grows with each reduction over them.
    clipped = jnp.clip(point, -half_extents, half_extents)
    to_faces = half_extents - jnp.abs(point)
    reachable = jnp.where(buried_side == 0, to_faces, half_extents + buried_side * point)
    signs = jnp.where(buried_side == 0, jnp.where(point >= 0, 1.0, -1.0), -buried_side)
    r0, r1, r2 = reachable[0], reachable[1], reachable[2]
    first = (r0 <= r1) & (r0 <= r2)
    second = ~first & (r1 <= r2)
    face_normal = jnp.stack([jnp.where(first, signs[0], 0.0), jnp.where(second, signs[1], 0.0),
                             jnp.where(first | second, 0.0, signs[2])]).astype(point.dtype)
    inside = (to_faces[0] >= 0) & (to_faces[1] >= 0) & (to_faces[2] >= 0)
    nearest = jnp.minimum(jnp.minimum(to_faces[0], to_faces[1]), to_faces[2])
    outward, distance = unit(point - clipped, face_normal)
    return jnp.where(inside, face_normal, outward), jnp.where(inside, -nearest, distance)


def box_penetration(terrain: Terrain, points: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Depth ``(P, B)`` [m] of each of ``points (P, 3)`` in each static box (inside: to its nearest
    face; outside: minus the distance to the box) and the normal ``(P, B, 3)`` by which it leaves
    the box: outside, the outward normal of the box's nearest surface point; inside, that of the
    nearest face a body can reach (:func:`_buried_faces`). A body's corner inside a wall standing
    on the floor, nearer its bottom than its side, is pushed out of the side, by as much as it is
    above the floor: its push fades as it comes down to the floor (at which, and below which, it
    is the floor's), never down through the bottom into the floor."""
    R = terrain.box_transforms[:, :3, :3]
    local = jnp.einsum("bji,pbj->pbi", R, points[:, None, :] - terrain.box_transforms[None, :, :3, 3])
    buried = _buried_faces(terrain)
    buried_side = buried[:, 0].astype(local.dtype) - buried[:, 1].astype(local.dtype)
    per_box = jax.vmap(_box_surface, in_axes=(0, 0, 0))
    local_normal, distance = jax.vmap(per_box, in_axes=(0, None, None))(local, terrain.box_half_extents, buried_side)
    return -distance, jnp.einsum("bij,pbj->pbi", R, local_normal)


def touch(terrain: Terrain, centres: jax.Array, radii: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Swept points of ``centres (P, 3)`` and ``radii (P,)`` [m] against the terrain: their depth
    ``(P,)`` [m] (positive inside), the outward normal ``(P, 3)`` below them and the contact
    points ``p - r n`` ``(P, 3)`` [m] (the material point of each ball nearest the surface)."""
    depth, normal = penetration(terrain, centres, radii)
    return depth, normal, centres - radii[:, None] * normal


def penetration(terrain: Terrain, points: jax.Array, radii: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
    """Depth ``(P,)`` [m] (positive inside) and outward normal ``(P, 3)`` of the deepest surface at
    ``points (P, 3)``, the centres of balls of ``radii (P,)`` [m] (None: points); of the surfaces
    together where a point is in several about as deep (:func:`_combined`)."""
    depth, normal = _ground(terrain, points)
    if radii is not None:
        depth = depth + radii
    if terrain.box_transforms.shape[0] == 0:
        return depth, normal
    box_depth, box_normal = box_penetration(terrain, points)
    if radii is not None:
        box_depth = box_depth + radii[:, None]
    all_depths = jnp.concatenate([depth[:, None], box_depth], axis=1)
    all_normals = jnp.concatenate([normal[:, None], box_normal], axis=1)
    return _combined(all_depths, all_normals)


CORNER_EXPONENT = 1.5
"""The power of the depths that weighs the surfaces a point penetrates together (in a corner):
the elastic force of the Hunt-Crossley law of the default exponent ``p = 1/2`` (``d^(1+p)``)."""

CORNER_GATE = 0.75
"""The fraction of the deepest surface's depth below which another surface a point is in is left
out of its contact (see :func:`_combined`)."""


def _combined(depths: jax.Array, normals: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One depth ``(P,)`` [m] and outward normal ``(P, 3)`` per point of its ``depths (P, S)`` [m] in
    ``S`` surfaces with ``normals (P, S, 3)``. Where the point is in several surfaces about as deep
    (a corner of the terrain): the direction of ``w = sum_s g_s (d_s / d)^e n_s`` and the depth
    ``d |w|^(1/e)`` (``d`` the deepest surface's depth, ``e`` = :data:`CORNER_EXPONENT`), at which
    the law of that exponent pushes along that direction as those surfaces would together, each
    surface gated by ``g_s = clip((d_s / d - c) / (1 - c), 0, 1)`` (``c`` = :data:`CORNER_GATE`):
    a surface much shallower than the deepest is left out (a ball rolling into a wall is not
    pushed along a normal tilted by the floor it rests on, with the damping and friction of its
    impact): the deepest surface alone where no other is about as deep. The depth and the normal
    are continuous as the depths change (the deepest surface alone would switch between the
    walls of a corner from step to step, and a body pressed into it would rattle)."""
    deepest = jnp.argmax(depths, axis=1)
    top = jnp.max(depths, axis=1)
    alone = jnp.take_along_axis(normals, deepest[:, None, None], axis=1)[:, 0]
    inside = depths > 0
    safe_top = jnp.where(top > 0, top, 1.0)
    # The weights relative to the deepest surface's, in [0, 1]: 1 for it.
    ratio = jnp.where(inside, jnp.maximum(depths, 0.0) / safe_top[:, None], 0.0)
    weights = ratio**CORNER_EXPONENT * jnp.clip((ratio - CORNER_GATE) / (1 - CORNER_GATE), 0.0, 1.0)
    summed = jnp.einsum("ps,psk->pk", weights, normals)
    norm = jnp.sqrt(jnp.maximum(jnp.sum(summed**2, axis=1), 1e-24))
    several = (jnp.sum(inside, axis=1) > 1) & (norm > 1e-6)
    normal = jnp.where(several[:, None], summed / norm[:, None], alone)
    depth = jnp.where(several, top * jnp.where(several, norm, 1.0) ** (1 / CORNER_EXPONENT), top)
    return depth, normal
