"""A box's edges and corners on the cap of a cylinder that faces it, exactly.

The cylinder's sampled rim points meet a box's faces (:mod:`..rims`), and its side meets the box
through its capsule (:func:`.cylinder.rims_on_box`); neither sees a box's edge lying across the
cap (a box balanced on its edge, a can standing on one): the edge sank into the cap until the
box's wedge reached two rim samples. Here the box's 12 edges and 8 corners meet the cap that faces
the box (on the side of the box's centre along the axis), in the cylinder's frame (axis z, the cap
at ``z = s h``, its outward normal ``s z``):

- where an edge crosses the cap's rim seen along the axis (a root of ``|P + t E| = r`` of its
  projection, strictly within the edge), its point there below the cap's plane is a contact
  along the cap's normal, as deep as it lies below that plane (an edge across a cap rests on the
  two ends of its chord); where the edge's point nearest to the rim's circle (Newton steps on the
  squared distance, from that root) lies inside the cylinder, inward of both the cap and the side,
  and within the edge, the edge crosses the rim there: the contact is as deep as that point's
  distance to the circle, along the direction to it (the closest points of the edge and the
  circle; the cap's contact where that point reaches the crossing; inside the circle, where the
  distance curves down, the steps take its Gauss-Newton curvature: the full one stopped them
  inside the cylinder, far from the circle);
- a corner inside the cap's disk and below its plane: as deep as it lies below it, less its
  depth inside the side (its own collidable point meets the side there, nearer than the cap,
  :func:`.points.signed_distance`; nearer the cap, the point alone carries it).

Each meets the cap only where its edge or corner is the box's farthest point into the cylinder
along its normal: it fades out as a face beside it turns past the contact's plane, by ``_TILT``
(the cap turned away from a wide box that the cylinder leans on over the box's edge, its centre
past that cap's plane, met the edge of the box's top face at the depth of the whole box). The
pair's contact is no deeper than the box and the cylinder overlap along any of the box's axes
(:func:`_face_overlap`, separating axes): a candidate deeper than 1.5 times that overlap fades out,
none at 3 times (an edge of a wide box crossing the rim seen along the axis in the cylinder's
side: the side's contact, the box's face's). Each is shallower by the excess of its point's depth below the cap's plane over the box's way out
across the axis (:func:`_way_out`), as :func:`.cylinder.on_side` fades the side's contacts by the
way out past a cap (a box beside a can, pressed into its side or touching its far rim, has no
contact with the cap); shallower in proportion as the box's centre comes from past the cap's plane
to midway between that plane and the cylinder's middle (none nearer the middle: which cap faces the
box switches there); and no deeper than ``_FADE_IN`` times how far its crossing's chord reaches
either way, or its corner lies inside the rim: a contact comes onto the cap from zero depth. The
first :data:`SLOTS` candidates that hold a contact, in that order, fill the slots, each with its
candidate's feature (its tangential memory follows it).
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from ...dynamics.spatial import safe_sqrt
from .geometry import nearest_to_rim
from .slots import Slots

SLOTS = 4
"""The slots of a box's edges and corners on a cylinder's cap: an edge across a cap rests on two
ends of its chord; a face over part of a cap on the crossings of two edges and the corners between."""

_SIGNS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))  # the 8 corners
_EDGES = np.array([(i, j) for i in range(8) for j in range(i + 1, 8) if np.sum(_SIGNS[i] != _SIGNS[j]) == 1])  # (12, 2)
CANDIDATES = 2 * len(_EDGES) + len(_SIGNS)
"""The candidates: two rim crossings per edge, then the corners."""
FEATURES = CANDIDATES + SLOTS
"""Features of the slots (:attr:`.slots.Slots.feature`): an empty slot keeps one of its own."""
_NEWTON = 2  # Newton steps from a rim crossing to the edge's point nearest to the rim's circle
_FADE_IN = 10.0  # a crossing or a corner coming onto the cap is no deeper than this times how far it is on it
_ALONG_AXIS = 1e-12  # an edge whose projection across the axis is shorter than this (squared, relative) crosses no rim
_TILT = 0.1  # a face beside a candidate's edge or corner turned this far (sine) past its contact's plane: no contact
_FACES = np.concatenate([np.repeat(np.where(_SIGNS[_EDGES[:, 0]] == _SIGNS[_EDGES[:, 1]], _SIGNS[_EDGES[:, 0]], 0.0), 2, axis=0), _SIGNS])
"""Per candidate ``(CANDIDATES, 3)``, the signs of the box's axes that are the outward normals of
the faces beside its edge or corner (0: the edge's own axis)."""


def _plane(u: jax.Array, v: jax.Array) -> jax.Array:
    """The dot products of the parts across the axis (x, y) of ``u`` and ``v`` ``(..., 3)``, by components."""
    return u[..., 0] * v[..., 0] + u[..., 1] * v[..., 1]


def box_on_cap(H: jax.Array, size: jax.Array, H_box: jax.Array, half: jax.Array) -> Slots:
    """:data:`SLOTS` slots of the box of ``half`` extents at ``H_box (4, 4)`` (b) on the cap of the
    cylinder at ``H (4, 4)`` of ``size (3,)`` (a: radius, half length) that faces it; the normal
    from b towards a; features among :data:`FEATURES`. Small products are written out by
    components: each reduction and product of its own is a kernel to compile."""
    R, origin = H[:3, :3], H[:3, 3]
    radius, length = size[0], size[1]
    axes = R.T @ H_box[:3, :3]  # the box's axes (columns) in the cylinder's frame
    centre = R.T @ (H_box[:3, 3] - origin)
    corners = centre + (jnp.asarray(_SIGNS, half.dtype) * half) @ axes.T  # (8, 3)
    s = jnp.where(centre[2] >= 0, 1.0, -1.0).astype(half.dtype)
    cap = s * length
    way_out = _way_out(centre, axes, half, radius)

    start, end = corners[_EDGES[:, 0]], corners[_EDGES[:, 1]]
    span = (end - start)[:, None]  # (12, 1, 3), parameter t in [0, 1]
    start = start[:, None]
    a, b, c = _plane(span, span)[:, 0], _plane(start, span)[:, 0], _plane(start, start)[:, 0] - radius**2
    crossing = b**2 - a * c
    usable = (a > _ALONG_AXIS * (a + span[:, 0, 2] ** 2)) & (crossing > 0)
    root = safe_sqrt(crossing)
    safe_a = jnp.where(usable, a, 1.0)
    t = jnp.stack([(-b - root) / safe_a, (-b + root) / safe_a], axis=1)  # (12, 2)
    within = usable[:, None] & (t > 0) & (t < 1)
    t = jnp.clip(t, 0.0, 1.0)
    on_rim = start + t[..., None] * span  # (12, 2, 3)
    below = s * (cap - on_rim[..., 2])  # how deep below the cap's plane, along its outward normal

    # The edge's point nearest to the rim's circle, from each crossing.
    nearest = jnp.clip(nearest_to_rim(start, span, t, radius, cap, _NEWTON), 0.0, 1.0)
    p = start + nearest[..., None] * span
    rho = safe_sqrt(_plane(p, p))
    inward_side, inward_cap = radius - rho, s * (cap - p[..., 2])
    distance = safe_sqrt(inward_side**2 + inward_cap**2)
    rim = (inward_side >= 0) & (inward_cap >= 0) & (distance > 0) & (nearest > 0) & (nearest < 1)
    # The outward normal at the rim: along the radius by the side's share, along the axis by the cap's.
    radial = jnp.where(rim, inward_side / jnp.where(rim, distance * jnp.where(rho > 0, rho, 1.0), 1.0), 0.0)
    along = jnp.where(rim, inward_cap / jnp.where(rim, distance, 1.0), 1.0) * s
    edge_normal = jnp.stack([radial * p[..., 0], radial * p[..., 1], along], axis=-1)
    # A crossing is no deeper than _FADE_IN times its chord's half length: none where the edge touches the rim seen along the axis.
    edge_depth = jnp.minimum(jnp.where(rim, distance, below), _FADE_IN * (root / jnp.sqrt(safe_a))[:, None])
    edge_point = jnp.where(rim[..., None], p, on_rim)

    corner_rho = safe_sqrt(_plane(corners, corners))
    corner_below = s * (cap - corners[:, 2])
    corner_depth = jnp.minimum(corner_below - (radius - corner_rho), _FADE_IN * (radius - corner_rho))

    depth = jnp.concatenate([edge_depth.reshape(-1), corner_depth])
    axial = jnp.concatenate([jnp.where(rim, inward_cap, below).reshape(-1), corner_below])  # each point's depth below the cap's plane
    # The cap faces a box whose centre lies past its plane; none where it lies midway (either cap, beside the side).
    facing = jnp.clip(2 * jnp.abs(centre[2]) / length - 1, 0.0, 1.0)
    axis_out = jnp.stack([0.0 * s, 0.0 * s, s])
    normals = jnp.concatenate([edge_normal.reshape(-1, 3), jnp.broadcast_to(axis_out, (8, 3))])  # outward, the cylinder's
    # The box's edge or corner meets the contact's plane only where no face beside it turns past that plane.
    support = jnp.clip(1 - jnp.max(jnp.asarray(_FACES, half.dtype) * (normals @ axes), axis=1) / _TILT, 0.0, 1.0)
    depth = facing * support * jnp.minimum(jnp.minimum(depth, 2 * way_out - axial), 3 * _face_overlap(centre, axes, half, radius, length) - depth)
    valid = jnp.concatenate([within.reshape(-1), corner_rho < radius])
    holds = valid & (depth > 0)
    rank = jnp.cumsum(holds) - 1
    pick = (holds[None, :] & (rank[None, :] == jnp.arange(SLOTS)[:, None])).astype(depth.dtype)  # (SLOTS, CANDIDATES)
    ones = jnp.ones_like(depth)
    # One product picks every field: depth, outward normal, point, feature and whether filled.
    fields = jnp.concatenate([
        depth[:, None], normals,
        jnp.concatenate([edge_point.reshape(-1, 3), corners]), jnp.arange(CANDIDATES, dtype=depth.dtype)[:, None], ones[:, None]], axis=1)
    picked = pick @ fields  # (SLOTS, 9)
    filled = picked[:, 8] > 0
    picked_depth = jnp.where(filled, picked[:, 0], -1.0)
    picked_normal = jnp.where(filled[:, None], picked[:, 1:4], axis_out)
    position = picked[:, 4:7] + 0.5 * picked_depth[:, None] * picked_normal
    # World axes, the normal from the box (b) towards the cylinder (a): the outward normal reversed.
    world = jnp.concatenate([position, -picked_normal]) @ R.T
    feature = jnp.where(filled, jnp.round(picked[:, 7]).astype(jnp.int32), CANDIDATES + jnp.arange(SLOTS, dtype=jnp.int32))
    return Slots(world[:SLOTS] + origin, world[SLOTS:], picked_depth, filled, feature)


def _way_out(centre: jax.Array, axes: jax.Array, half: jax.Array, radius: jax.Array) -> jax.Array:
    """How far [m] the box of ``half`` extents, its ``centre (3,)`` and ``axes (3, 3)`` (columns) in
    the cylinder's frame, must move across the axis to clear the cylinder of ``radius``: the least
    overlap of the box and the cap's disk seen along the axis, along the box's axes across it and
    the direction from the axis to its centre."""
    across = jnp.concatenate([axes.T, centre[None]])  # (4, 3): the directions, their parts across the axis
    length = safe_sqrt(_plane(across, across))
    usable = length > 1e-6
    unit = across / jnp.where(usable, length, 1.0)[:, None]
    reach = sum(jnp.abs(_plane(unit, axes[:, j])) * half[j] for j in range(3))
    overlap = radius + reach - jnp.abs(_plane(unit, centre))
    return jnp.min(jnp.where(usable, overlap, jnp.inf))


def _face_overlap(centre: jax.Array, axes: jax.Array, half: jax.Array, radius: jax.Array, length: jax.Array) -> jax.Array:
    """The least overlap [m] of the box of ``half`` extents, its ``centre (3,)`` and ``axes (3, 3)``
    (columns) in the frame of the cylinder of ``radius`` and half ``length``, and that cylinder
    along the box's axes: no contact of the two is deeper (separating axes)."""
    along = jnp.abs(axes[2])  # each box axis's part along the cylinder's axis
    reach = length * along + radius * safe_sqrt(jnp.maximum(1 - along**2, 0.0))
    return jnp.min(half + reach - jnp.abs(centre @ axes))
