"""Narrow phases against boxes: capsule-box (spheres being capsules of no length) and box-box.

A box is ``size = half extents (3,)`` around its frame's origin. Each function takes the world
poses ``H (4, 4)`` and sizes ``(3,)`` of shapes a and b (b is the box) and returns
:class:`.Slots` with the normal from b towards a.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .geometry import box_closest, perpendicular, safe_divide, segments_closest, to_frame, tolerance
from .slots import Slots

_SIGNS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))  # the 8 corners
_FACE_EDGES = np.array([[-1, -1, 1, -1], [1, -1, 1, 1], [1, 1, -1, 1], [-1, 1, -1, -1]], float)  # (u0, v0, u1, v1)
_EDGE_PREFERENCE = 0.95  # an edge-edge axis wins only when it overlaps less than 0.95 x the best face axis
BOX_BOX_SLOTS = 8
_BOX_BOX_CANDIDATES = 33  # 8 + 8 corners, 16 edge crossings, 1 edge-edge point
BOX_BOX_FEATURES = _BOX_BOX_CANDIDATES + BOX_BOX_SLOTS  # an empty slot keeps a feature of its own
_INSIDE_TOLERANCE = 1e-7  # relative: corners this close outside a box (times its size) count as inside
_PARALLEL = 1e-2  # [rad]: edges closer to parallel do not cross (see _crossings)


def _ball_box(centre: jax.Array, radius: jax.Array, H_b: jax.Array, half: jax.Array) -> Slots:
    """1 slot: the ball of ``radius`` at ``centre (3,)`` against the nearest point of the surface of
    the box of ``half`` extents at ``H_b`` (from inside, the face of least penetration)."""
    surface, B_normal, distance = box_closest(to_frame(H_b, centre), half)
    R, c = H_b[:3, :3], H_b[:3, 3]
    normal = R @ B_normal
    position = 0.5 * (centre - radius * normal + R @ surface + c)
    return Slots(position[None], normal[None], (radius - distance)[None], jnp.ones((1,), bool))


def capsule_box(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array,
                shaped: Callable[[Slots], Slots] | None = None) -> Slots:
    """3 slots along the capsule's segment (a sphere's has no length: one slot), each point of it
    as a sphere against the box: the two ends of the part of the segment that lies over the box (the box projected on the segment's
    axis; the segment's own ends when it is shorter), so that a capsule lying on or across a box
    rests on two points, and the point of the segment nearest to the box
    (:func:`segment_box_nearest`). The second and third are shallower by what the others carry
    where they come within a radius of them (:func:`end_fades`): a capsule standing on a box rests
    on one contact, and no slot switches on at full depth. ``shaped`` (None: the capsule's own)
    makes the segment's slots those of the shape a is (a cylinder's side and rims), slot by slot
    (each slot's result depends on that slot and the two shapes alone); the nearest
    point's slot is then faded by what the shape's ends carry: a cylinder's end whose rim lies
    outside the box takes nothing from the side contact beside it (faded by the end's ball, the
    side contact was switched on and off as the nearest point moved along the segment)."""
    radius, half = size_a[0], size_a[1]
    axis, centre = H_a[:3, 2], H_a[:3, 3]
    R, c = H_b[:3, :3], H_b[:3, 3]
    middle = jnp.dot(c - centre, axis)
    extent = jnp.abs(R.T @ axis) @ size_b
    low, high = jnp.clip(middle - extent, -half, half), jnp.clip(middle + extent, -half, half)
    t = segment_box_nearest(R.T @ (centre - c), R.T @ axis, half, size_b)
    slots = [_ball_box(centre + s * axis, radius, H_b, size_b) for s in (low, high, t)]
    position, normal, depth = (jnp.concatenate([getattr(slot, name) for slot in slots]) for name in ("position", "normal", "depth"))
    valid = repeats_not(low, high, t, centre.dtype, half + radius)
    faded = depth - end_fades(low, high, t, radius, depth)
    if shaped is None:
        return Slots(position, normal, faded, valid)
    # The nearest point's fade from what the shape's ends carry, the ends' from the segment's: the
    # ends shaped first, then the nearest point once faded; both times all 3 slots, so that what
    # the shape makes of their positions and normals alone is one computation (XLA's CSE).
    ends = shaped(Slots(position, normal, faded, valid))
    carried = jnp.where(ends.valid[:2], ends.depth[:2], 0.0)
    nearest = shaped(Slots(position, normal, faded.at[2].set(depth[2] - end_fades(low, high, t, radius, carried)[2]), valid))
    return jax.tree.map(lambda both, last: jnp.concatenate([both[:2], last[2:]]), ends, nearest)


def end_fades(low: jax.Array, high: jax.Array, nearest: jax.Array, radius: jax.Array, depth: jax.Array) -> jax.Array:
    """``(3,)`` [m]: how much shallower the slots of a capsule's segment at ``low``, ``high`` and
    ``nearest`` (parameters along it, of ``depth (3,)`` [m]; only the ends' two are read) are taken, so that a slot that comes to
    repeat another one fades out continuously instead of switching off at full depth (the pair's
    force would jump by a contact's share): ``high`` by ``low``'s depth (where positive) times
    ``1 - (high - low) / radius`` (clipped to [0, 1]), ``nearest`` by the larger of the same for
    either end. A slot of its own, away from the others or deeper than they are, keeps what the
    others do not carry."""
    ends = jnp.maximum(depth[:2], 0.0)

    def overlap(gap: jax.Array) -> jax.Array:
        return jnp.clip(1 - gap / radius, 0.0, 1.0)

    from_ends = jnp.maximum(ends[0] * overlap(nearest - low), ends[1] * overlap(high - nearest))
    return jnp.stack([jnp.zeros_like(radius), ends[0] * overlap(high - low), from_ends])


def repeats_not(low: jax.Array, high: jax.Array, nearest: jax.Array, dtype, length: jax.Array) -> jax.Array:
    """``(3,)``: which of the slots at ``low``, ``high`` and ``nearest`` along a capsule's segment
    (of ``length`` [m], its half length plus radius) do not lie on another one (to rounding):
    those fully faded by :func:`end_fades` and at the same point are not candidates."""
    margin = tolerance(dtype, 1e-6) * length
    return jnp.stack([True, high - low > margin, (nearest > low + margin) & (nearest < high - margin)])


def segment_box_nearest(centre: jax.Array, axis: jax.Array, half: jax.Array, half_extents: jax.Array) -> jax.Array:
    """Parameter ``t`` in ``[-half, half]`` of the point ``centre + t axis`` (box frame, unit ``axis``)
    nearest to the box of ``half_extents``, exactly: the squared distance is a piecewise quadratic
    of ``t`` between the crossings of the 6 face planes, minimised on every piece (the piece to
    the right of each crossing, found without sorting)."""
    steep = jnp.abs(axis) > 1e-12
    safe_axis = jnp.where(steep, axis, 1.0)
    crossings = jnp.where(steep, (jnp.stack([-half_extents, half_extents]) - centre) / safe_axis, -half)
    breaks = jnp.clip(jnp.concatenate([crossings.reshape(-1), jnp.stack([-half, half])]), -half, half)  # (8,)
    following = jnp.min(jnp.where(breaks[None, :] > breaks[:, None], breaks[None, :], half), axis=1)

    def squared_distance(t):
        p = centre + t * axis
        return jnp.sum((p - jnp.clip(p, -half_extents, half_extents)) ** 2)

    def piece_minimum(lower, upper):
        p = centre + 0.5 * (lower + upper) * axis
        target = jnp.clip(p, -half_extents, half_extents)
        outside = jnp.abs(p) > half_extents
        weight = jnp.sum(jnp.where(outside, axis**2, 0.0))
        slope = jnp.sum(jnp.where(outside, (centre - target) * axis, 0.0))
        return jnp.clip(-slope / jnp.where(weight > 1e-12, weight, 1.0), lower, upper)

    candidates = jnp.concatenate([breaks, jax.vmap(piece_minimum)(breaks, following)])
    return candidates[jnp.argmin(jax.vmap(squared_distance)(candidates))]


def _separating_axis(R_a, half_a, R_b, half_b, d):
    """The axis of least overlap: ``(normal (3,) from b to a, overlap, is_edge, edge index i*3+j)``."""
    face_axes = jnp.concatenate([R_a.T, R_b.T])  # (6, 3)
    crosses = jnp.cross(R_a.T[:, None, :], R_b.T[None, :, :]).reshape(9, 3)
    lengths = jnp.sqrt(jnp.maximum(jnp.sum(crosses**2, axis=-1), 1e-30))
    usable = lengths > 1e-6
    edge_axes = crosses / jnp.where(usable, lengths, 1.0)[:, None]

    def overlap(L):
        return jnp.abs(L @ R_a) @ half_a + jnp.abs(L @ R_b) @ half_b - jnp.abs(L @ d)

    face_overlap = jax.vmap(overlap)(face_axes)
    edge_overlap = jnp.where(usable, jax.vmap(overlap)(edge_axes), jnp.inf)
    face, edge = jnp.argmin(face_overlap), jnp.argmin(edge_overlap)
    use_edge = edge_overlap[edge] < _EDGE_PREFERENCE * face_overlap[face]
    L = jnp.where(use_edge, edge_axes[edge], face_axes[face])
    depth = jnp.where(use_edge, edge_overlap[edge], face_overlap[face])
    normal = jnp.where(jnp.dot(L, d) >= 0, 1.0, -1.0) * L
    return normal, depth, use_edge, edge


def _corners(R, c, half):
    return (jnp.asarray(_SIGNS, half.dtype) * half) @ R.T + c  # (8, 3)


def _slack(dtype, half: jax.Array) -> jax.Array:
    """[m]: how far outside a box of largest half extent ``half`` [m] a corner still counts as inside."""
    return tolerance(dtype, _INSIDE_TOLERANCE) * half + 1e-12


def _inside_depth(points, R, c, half, direction):
    """Which of ``points (K, 3)`` lie in the box (inclusive) as seen along the unit ``direction
    (3,)``, how far each moves along it before it leaves the box through the face that
    ``direction`` points at most (that face's slab), and which lie, seen along ``direction``,
    on a corner of that face. Seen along ``direction``: a point inside that face's slab whose
    exit point lies on the face, as the crossings of the faces' edges are seen
    (:func:`_crossings`), so that at a corner on a side face, as where stacked boxes' side faces
    are flush, there is either the corner or the crossing of its edges, as deep as the rest of
    its face whichever way the side leans."""
    local = (points - c) @ R
    slack = _slack(points.dtype, jnp.max(half))
    along = R.T @ direction
    axis = jnp.argmax(jnp.abs(along))
    exits = (half[axis] - jnp.where(along[axis] >= 0, 1.0, -1.0) * local[:, axis]) / jnp.abs(along[axis])
    lateral = jnp.arange(3) != axis
    exit_point = jnp.where(lateral, local + exits[:, None] * along, local)
    inside = jnp.all(jnp.abs(exit_point) <= half + slack, axis=-1)
    on_corner = jnp.all((jnp.abs(jnp.abs(exit_point) - half) <= slack) | ~lateral, axis=-1)
    return inside, exits, on_corner


def _face_edges(R, c, half, direction):
    """The 4 edges ``(4, 2, 3)`` of the face of the box whose outward normal is nearest to ``direction``."""
    alignment = R.T @ direction
    axis = jnp.argmax(jnp.abs(alignment))
    sign = jnp.where(alignment[axis] >= 0, 1.0, -1.0)
    u, v = (axis + 1) % 3, (axis + 2) % 3
    R_u, R_v, R_n = R[:, u], R[:, v], R[:, axis]
    face_centre = c + sign * half[axis] * R_n
    ends = jnp.asarray(_FACE_EDGES, half.dtype)
    U = ends[:, 0::2][..., None] * half[u] * R_u  # (4, 2, 3): u-offsets of each edge's two ends
    V = ends[:, 1::2][..., None] * half[v] * R_v
    return face_centre + U + V


def _crossings(edges_a, edges_b, normal, slack):
    """Where the edges ``(4, 2, 3)`` of a's face and of b's face cross seen along ``normal``:
    points on a's and b's edges ``(16, 3)`` each, and whether they cross inside both, farther
    than ``slack`` [m] from their ends, at an angle that parts them by more than ``slack`` over
    the longer edge (within it, the corners count as inside: see :func:`_inside_depth`), and at
    more than ``_PARALLEL`` to each other. Where two nearly parallel edges cross, the crossing
    slides along them with the slightest turn (flush side faces of stacked boxes: anywhere along
    the side from one step to the next); it is a vertex of the faces' overlap between two
    neighbours nearly in line with it, whose ends, corners inside the other box or crossings of
    edges that do meet at an angle, hold the side without it."""
    t1 = perpendicular(normal)
    t2 = jnp.cross(normal, t1)
    plane = jnp.stack([t1, t2])  # (2, 3)
    a0, a1 = edges_a[:, None, 0], edges_a[:, None, 1]
    b0, b1 = edges_b[None, :, 0], edges_b[None, :, 1]
    u, w, r = (a1 - a0) @ plane.T, (b1 - b0) @ plane.T, (b0 - a0) @ plane.T  # (4, 4, 2) after broadcasting
    u, w, r = jnp.broadcast_to(u, (4, 4, 2)), jnp.broadcast_to(w, (4, 4, 2)), jnp.broadcast_to(r, (4, 4, 2))

    def cross2(x, y):
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]

    det = cross2(u, w)
    length_u, length_w = jnp.sqrt(jnp.sum(u**2, -1)), jnp.sqrt(jnp.sum(w**2, -1))
    ok = jnp.abs(det) > jnp.maximum(slack * jnp.maximum(length_u, length_w), math.sin(_PARALLEL) * length_u * length_w)
    alpha = safe_divide(cross2(r, w), jnp.where(ok, det, 1.0))
    beta = safe_divide(cross2(r, u), jnp.where(ok, det, 1.0))
    inside = ok & (jnp.minimum(alpha, 1 - alpha) * length_u > slack) & (jnp.minimum(beta, 1 - beta) * length_w > slack)
    on_a = (a0 + alpha[..., None] * (a1 - a0)).reshape(16, 3)
    on_b = (b0 + beta[..., None] * (b1 - b0)).reshape(16, 3)
    return on_a, on_b, inside.reshape(16)


def box_box(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """8 slots along one separating-axis normal (the axis of least overlap among the 6 face normals
    and the 9 edge-edge cross products, an edge axis only when clearly better): the first 8
    penetrating ones of 33 candidates, in the order below (the overlap of two faces is a polygon
    of at most 8 corners; more only when a box sinks deep into the other):

    - face axis: the 8 corners of a inside b and the 8 corners of b inside a (inclusive, so that
      corners on a side face count; a corner of b lying, seen along the normal, on a corner of a
      is dropped: boxes stacked with aligned edges touch at 4 points, not 8), each as deep as
      its distance along the normal to the other box's face (:func:`_inside_depth`), and the 16
      crossings of the edges of the two faces that meet along the normal, at an angle (a box
      turned on a box of its size: an octagon);
    - edge axis: the closest points of the two edges that meet (1 slot), at the axis' overlap.

    Each filled slot's feature is its candidate's place in that order; empty slot ``k`` has
    feature ``33 + k``.
    """
    R_a, c_a, R_b, c_b = H_a[:3, :3], H_a[:3, 3], H_b[:3, :3], H_b[:3, 3]
    size_a, size_b = jnp.asarray(size_a, H_a.dtype), jnp.asarray(size_b, H_b.dtype)
    normal, overlap, use_edge, edge = _separating_axis(R_a, size_a, R_b, size_b, c_a - c_b)
    face = ~use_edge

    corners_a, corners_b = _corners(R_a, c_a, size_a), _corners(R_b, c_b, size_b)
    a_in_b, depth_a, _ = _inside_depth(corners_a, R_b, c_b, size_b, normal)
    b_in_a, depth_b, repeated = _inside_depth(corners_b, R_a, c_a, size_a, -normal)
    depth_a, depth_b = jnp.where(a_in_b, depth_a, -1.0), jnp.where(b_in_a, depth_b, -1.0)
    position_a = corners_a + 0.5 * depth_a[:, None] * normal
    position_b = corners_b - 0.5 * depth_b[:, None] * normal
    b_in_a = b_in_a & ~(repeated & jnp.any(a_in_b))  # a corner of b under a corner of a: already there

    slack = _slack(H_a.dtype, jnp.maximum(jnp.max(size_a), jnp.max(size_b)))
    on_a, on_b, crossing = _crossings(_face_edges(R_a, c_a, size_a, -normal), _face_edges(R_b, c_b, size_b, normal), normal, slack)
    depth_x = (on_b - on_a) @ normal

    i, j = edge // 3, edge % 3
    edge_a = c_a - (jnp.where(R_a.T @ normal >= 0, 1.0, -1.0) * size_a * (jnp.arange(3) != i)) @ R_a.T
    edge_b = c_b + (jnp.where(R_b.T @ normal >= 0, 1.0, -1.0) * size_b * (jnp.arange(3) != j)) @ R_b.T
    s, t = segments_closest(edge_a, R_a[:, i], size_a[i], edge_b, R_b[:, j], size_b[j])
    position_e = 0.5 * (edge_a + s * R_a[:, i] + edge_b + t * R_b[:, j])

    position = jnp.concatenate([position_a, position_b, 0.5 * (on_a + on_b), position_e[None]])
    depth = jnp.concatenate([depth_a, depth_b, depth_x, overlap[None]])
    valid = jnp.concatenate([a_in_b & face, b_in_a & face, crossing & face, use_edge[None]])
    # The first 8 candidates that hold a contact, in this order, by a dense selection (sorting 33
    # values per pair costs more than the whole narrow phase on the CPU).
    holds = valid & (depth > 0)
    rank = jnp.cumsum(holds) - 1
    pick = (holds[None, :] & (rank[None, :] == jnp.arange(BOX_BOX_SLOTS)[:, None])).astype(depth.dtype)  # (8, 33)
    filled = jnp.sum(pick, axis=1) > 0
    return Slots(
        jnp.where(filled[:, None], pick @ position, c_a),
        jnp.broadcast_to(normal, (BOX_BOX_SLOTS, 3)),
        jnp.where(filled, pick @ depth, jnp.minimum(overlap, 0.0)),
        filled,
        jnp.where(filled, jnp.argmax(pick, axis=1), _BOX_BOX_CANDIDATES + jnp.arange(BOX_BOX_SLOTS)).astype(jnp.int32),
    )

