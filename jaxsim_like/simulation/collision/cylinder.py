"""Cylinders in the narrow phases (``size = (radius, half length along z, 0)``).

A sphere meets a cylinder as a swept point (the signed distance of its centre, :mod:`.points`).
Against capsules, boxes and cylinders a cylinder is the capsule of its radius and segment with
only the contacts on its side kept (their position lies within its length, each as deep as the
side reaches along its normal, fading out as its position passes a cap and where deeper than
the other shape's way out past a cap:
:func:`on_side`; against a box, a contact at an end of the segment is the end's disc against the
box, along their least overlap: :func:`rims_on_box`): the caps and rims are met by
the cylinder's rim points and by the other shape's points, which the pair table keeps for these
kinds (see :mod:`.kinds`). Two cylinders' caps pressed into each other, or one's cap pressed
against the other's side, also meet in a slot of their own (:func:`caps_facing`): where their
rims lie on each other's side, their rim points are no deeper than their distance to that side.
A capsule's segment meets a cylinder's rim in slots of their own (:func:`capsule_on_rim`): the
rim points sample the rim, and the capsule's end balls meet the cap only under its ends. Two
cylinders' rims pressed across each other, rim on rim, meet in a slot of their own too
(:mod:`.rims`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...dynamics.spatial import dot, matvec, safe_sqrt
from .geometry import across_axis, cayley_turn, nearest_to_rim, perpendicular, segments_closest, tolerance, unit
from .points import cylinder_distance
from .slots import Slots

_SIDE_TOLERANCE = 1e-7  # relative to the half length: side contacts this far past a cap still count
_CAP_RAYS = 16  # rays from a cap's centre to its rim that find its deepest point over another cylinder's cap
_CAP_COS = np.cos(np.linspace(0.0, 2 * np.pi, _CAP_RAYS, endpoint=False))  # their turns' cosines and sines (constants: no sine in the program)
_CAP_SIN = np.sin(np.linspace(0.0, 2 * np.pi, _CAP_RAYS, endpoint=False))
_EDGE_SAMPLES = 9  # turns about a box's edge, from one face to the other, that start the Newton steps
_EDGE_TURNS = np.linspace(0.0, 0.5 * np.pi, _EDGE_SAMPLES)
_EDGE_COS, _EDGE_SIN = np.cos(_EDGE_TURNS), np.sin(_EDGE_TURNS)  # those turns' cosines and sines (constants: no sine in the program)
_EDGE_NEWTON = 3  # Newton steps that turn a normal about a box's edge to the least overlap of a cylinder's end with the box
_END_LEAN = 0.5  # [sine]: a direction leaning out of a cylinder's end by more than this meets the cylinder behind the end
_RIM_ACROSS = 1e-2  # a normal whose part across the axis is less than this meets the cap (its rim points), not the rim
_RIM_NEWTON = 8  # Newton steps from a crossing of a capsule's segment and a cap's rim, seen along the axis, to its point nearest to the rim
_RIM_LEAN = 0.1  # a capsule's rim contact whose normal's part along the axis, towards the cap's side, is less than this fades out: the side's
_ALONG_AXIS = 1e-12  # a segment whose direction's part across the axis is less than this (squared) crosses no rim seen along the axis


def on_side(slots: Slots, H: jax.Array, size: jax.Array, cylinder: jax.Array, pushed: float, clear: jax.Array) -> Slots:
    """``slots`` of the capsule of the shape at ``H (4, 4)`` of ``size (3,)`` as its cylinder's side,
    where it is a ``cylinder`` (a bool, traced or not; else unchanged): the contacts whose
    position lies within its length, each as deep as the side reaches along its normal; one
    whose position lies past a cap shallower by as much, so that it fades out continuously as
    its position crosses the cap's plane (switched off there at its depth, the side's contact of
    a box's edge that a landing drove over the rim came and went from one step to the next, and
    kicked the box each time); and shallower by its excess over ``clear`` [m], how far the other
    shape must move along the axis to leave the cylinder past its nearer cap (:func:`past_caps`): a side contact at least twice
    as deep as that way out, of a shape that crosses a cap only a little (a box resting on the
    cap, whose contacts are the points'), is not the side's, and one between fades out
    continuously (switched off at its depth, a box leaning on the rim rattled). The capsule's
    ball at a point of the segment reaches ``radius`` along the normal, the side only ``radius``
    times the normal's part across the axis: the depth is less by the difference and the
    position moves by half of it along the normal (``pushed``: +1 where the shape is pushed along
    the normal, its slots' a; -1 where it is b)."""
    axis = H[:3, 2]
    axial = (slots.position - H[:3, 3]) @ axis
    past = jnp.maximum(jnp.abs(axial) - size[1] * (1 + tolerance(axial.dtype, _SIDE_TOLERANCE)) - 1e-12, 0.0)
    across = jnp.sqrt(jnp.maximum(1 - (slots.normal @ axis) ** 2, 1e-30))  # a normal along the axis: no NaN slope
    shortfall = jnp.where(cylinder, size[0] * (1 - across), 0.0)
    depth = slots.depth - shortfall
    side = jnp.minimum(depth, 2 * clear - depth)
    beside = past <= jnp.maximum(side, 0.0)  # past a cap by more than its depth: not the side's
    return slots._replace(position=slots.position + (0.5 * pushed * shortfall)[:, None] * slots.normal,
                          depth=jnp.where(cylinder, side - past, depth), valid=slots.valid & (beside | ~cylinder))


def past_caps(H: jax.Array, size: jax.Array, centre: jax.Array, reach: jax.Array) -> jax.Array:
    """How far [m] a shape of world ``centre (3,)`` that reaches ``reach`` [m] either way along the
    axis of the cylinder at ``H (4, 4)`` of ``size (3,)`` must move along that axis to clear it,
    past the nearer cap."""
    along = (centre - H[:3, 3]) @ H[:3, 2]
    return jnp.minimum(size[1] - (along - reach), along + reach + size[1])


def round_reach(H: jax.Array, size: jax.Array, cylinder: jax.Array, direction: jax.Array) -> jax.Array:
    """How far [m] the capsule (a ``cylinder``: the cylinder) at ``H (4, 4)`` of ``size (3,)``
    reaches from its centre along the unit ``direction (3,)``."""
    cosine = jnp.abs(H[:3, 2] @ direction)
    across = jnp.sqrt(jnp.maximum(1 - cosine**2, 1e-30))  # along the axis: no NaN slope (the way out past a cap is differentiated)
    return size[1] * cosine + size[0] * jnp.where(cylinder, across, 1.0)


def caps_facing(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array, clear_a: jax.Array, clear_b: jax.Array,
                normal: jax.Array) -> Slots:
    """1 slot: the caps of two cylinders (world poses ``H (4, 4)``, sizes ``(3,)``; the normal from b
    towards a) pressed into each other, along the axis of the one (X) whose way out past a cap is
    the shorter (``clear_a``, ``clear_b`` [m]: :func:`past_caps` of the other along each axis): as
    deep past X's cap as the deepest point of the other's facing cap that lies over X's cap
    (:data:`_CAP_RAYS` rays from that cap's centre to its rim, clipped to X's radius; and the
    generator of the other's side farthest into X, from end to end, clipped alike: a side
    pressed against X's cap, the other's caps beside X's, lies beyond every ray), the position
    midway between that point and X's cap. The rim points carry such a contact only as deep as
    the smaller rim lies inside the larger one (a rim point on the other's side is no deeper than
    its distance to that side, about 0), so the slot is shallower by that margin (the side's
    generator by a part of it, from none at 60 degrees or more to X's axis to all along it:
    lying across X's cap, the rim points meet its contact at the ends of its chord only); and it fades out as
    that way out grows from the two's overlap across X's axis to twice that overlap (the sides'
    slots meet shapes side by side, as :func:`on_side` fades theirs). It is no deeper than the two
    overlap along the unit ``normal (3,)`` (that of their capsules' closest points): a tilted cap
    whose deepest point lies near the other's side leaves that way sooner."""
    on_b = clear_b <= clear_a
    H, size, H_other, size_other = jax.tree.map(lambda b, a: jnp.where(on_b, b, a), (H_b, size_b, H_a, size_a), (H_a, size_a, H_b, size_b))
    clear = jnp.minimum(clear_a, clear_b)
    axis, centre = H[:3, 2], H[:3, 3]
    offset = H_other[:3, 3] - centre
    along = offset @ axis
    pushed = jnp.where(along >= 0, 1.0, -1.0) * axis  # the other is pushed out past the nearer cap (:func:`past_caps`)
    # Projected twice: what rounding leaves along the axis is all the offset of coaxial cans in float32.
    across, distance = unit(across_axis(across_axis(offset, axis), axis), perpendicular(axis))
    reach = round_reach(H_other, size_other, jnp.asarray(True), across)
    overlap = size[0] + reach - distance  # of the two across X's axis, along ``across``
    margin = jnp.abs(size[0] - reach) - distance  # how far the smaller rim lies inside the larger one
    # The other's facing cap: rays from its centre to its rim, the part of each over X's cap (|lateral| <= radius).
    other_axis = H_other[:3, 2]
    cap_centre = H_other[:3, 3] - jnp.where(other_axis @ pushed >= 0, 1.0, -1.0) * size_other[1] * other_axis
    first = perpendicular(other_axis)
    rays = size_other[0] * (_CAP_COS.astype(axis.dtype)[:, None] * first + _CAP_SIN.astype(axis.dtype)[:, None] * jnp.cross(other_axis, first))
    # Then the generator of the other's side farthest into X, from end to end: a side pressed against X's cap.
    facing = unit(across_axis(across_axis(-pushed, other_axis), other_axis), first)[0]  # twice, as ``across``
    starts = jnp.concatenate([jnp.broadcast_to(cap_centre, rays.shape),
                              (H_other[:3, 3] + size_other[0] * facing - size_other[1] * other_axis)[None]])
    rays = jnp.concatenate([rays, 2 * size_other[1] * other_axis[None]])
    start = across_axis(starts - centre, axis)
    rays_across = across_axis(rays, axis)
    a, b = jnp.sum(rays_across**2, axis=1), jnp.sum(rays_across * start, axis=1)
    c = jnp.sum(start**2, axis=1) - size[0] ** 2
    crossing = b**2 - a * c
    root = jnp.where(crossing > 0, jnp.sqrt(jnp.where(crossing > 0, crossing, 1.0)), 0.0)  # no NaN slope where a ray grazes X's rim
    slanted = a > tolerance(a.dtype, _ALONG_AXIS) * jnp.sum(rays**2, axis=1)  # else along X's axis: in or out of its radius throughout
    safe = jnp.where(slanted, a, 1.0)
    low = jnp.where(slanted, (-b - root) / safe, jnp.where(c <= 0, 0.0, 2.0))
    high = jnp.where(slanted, (-b + root) / safe, jnp.where(c <= 0, 1.0, -1.0))
    low, high = jnp.maximum(low, 0.0), jnp.minimum(high, 1.0)
    over = (crossing >= 0) & (low <= high)
    cap_plane = (centre + size[1] * pushed) @ pushed
    below = cap_plane - starts @ pushed  # how deep past X's cap each ray's start lies
    slope = -(rays @ pushed)  # how much deeper per unit of the ray
    t = jnp.where(slope >= 0, high, low)
    # A ray that misses X's cap: 1 m out; less the margin that the rim points carry, the side's
    # generator in part from 60 degrees to X's axis, in full along it (across it, pressed flat on X's cap, none).
    carried = jnp.where(jnp.arange(_CAP_RAYS + 1) < _CAP_RAYS, 1.0, jnp.clip(2 * jnp.abs(other_axis @ axis) - 1, 0.0, 1.0))
    deepest = jnp.where(over, below + t * slope, -1.0) - jnp.maximum(margin, 0.0) * carried
    k = jnp.argmax(deepest)
    apart = (H_b[:3, 3] - H_a[:3, 3]) @ normal + round_reach(H_a, size_a, jnp.asarray(True), normal) + round_reach(H_b, size_b, jnp.asarray(True), normal)
    depth = jnp.minimum(jnp.minimum(deepest[k], 2 * overlap - clear), apart)
    point = starts[k] + t[k] * rays[k]
    position = point + 0.5 * depth * pushed
    return Slots(position[None], jnp.where(on_b, pushed, -pushed)[None], depth[None], jnp.ones((1,), bool))


def rims_on_box(slots: Slots, H: jax.Array, size: jax.Array, cylinder: jax.Array, H_box: jax.Array, half: jax.Array) -> Slots:
    """``slots`` of the capsule of the shape at ``H (4, 4)`` of ``size (3,)`` against the box of
    ``half`` extents at ``H_box`` (b; :func:`.box.capsule_box`) as its cylinder's, where it is a
    ``cylinder`` (else unchanged): a slot at a point within the segment as :func:`on_side`; a
    slot at one of its ends as that end's disc against the box, along the direction of their
    least overlap among a few (:func:`_end_into_box`: the slot's normal, it turned about the box's
    edges, the box's faces' normals), as deep as that overlap, at the rim point deepest along it;
    shallower by its excess over the box's way out past the nearer cap, as :func:`on_side`'s (a box
    standing under a cap is the cap's: its edges', :mod:`.box_caps`, and the rim points'); none
    where the normal is along the axis (the cap is met by the rim points). The end's capsule
    ball would report a box edge that passes beyond the cap (the rim not under it) as a
    contact, and :func:`on_side` drops the end's contact whose normal leans past the cap: a box
    over a cylinder's end would lose the contact under it at any tilt. Along the ball's normal
    alone, the rim point under a box's edge that lies along the side (the ball's nearest point
    past the cap) is as deep as the box reaches only where the edge passes over it, and a rim
    hanging past a box's edge meets the box's face, not its edge: the least overlap is the
    disc's penetration depth wherever one of those directions is its direction."""
    axis, centre = H[:3, 2], H[:3, 3]
    clear = past_caps(H, size, H_box[:3, 3], jnp.abs(axis @ H_box[:3, :3]) @ half)
    side = on_side(slots, H, size, cylinder, 1.0, clear)
    offset = slots.position - centre
    lean = slots.normal @ axis
    steep = 1 - lean**2
    axial = offset @ axis
    # The segment point of each slot: the point of the axis on the line through its position along its normal.
    t = jnp.where(steep > 1e-12, (axial - lean * jnp.sum(offset * slots.normal, axis=1)) / jnp.where(steep > 1e-12, steep, 1.0), axial)
    end = jnp.abs(t) >= size[1] * (1 - tolerance(t.dtype, _SIDE_TOLERANCE))
    end_centre = centre + jnp.clip(t, -size[1], size[1])[:, None] * axis
    outward = jnp.where(t >= 0, 1.0, -1.0)[:, None] * axis
    normal, overlap = _end_into_box(end_centre, outward, size, slots.normal, H_box, half)
    depth = jnp.minimum(overlap, 2 * clear - overlap)  # as the side's (:func:`on_side`): the cap's where the box leaves past it sooner
    radial = normal - (normal @ axis)[:, None] * axis
    across = jnp.sqrt(jnp.maximum(jnp.sum(radial**2, axis=1), 1e-30))  # a normal along the axis: no NaN slope
    rim = end_centre - size[0] * radial / across[:, None]
    use = cylinder & end
    return side._replace(position=jnp.where(use[:, None], rim + 0.5 * depth[:, None] * normal, side.position),
                         normal=jnp.where(use[:, None], normal, side.normal), depth=jnp.where(use, depth, side.depth),
                         valid=jnp.where(use, slots.valid & (across > _RIM_ACROSS), side.valid))


def _end_into_box(centre: jax.Array, outward: jax.Array, size: jax.Array, normal: jax.Array, H_box: jax.Array,
                  half: jax.Array) -> tuple[jax.Array, jax.Array]:
    """How the ends of a cylinder of ``size (3,)``, at world ``centre (K, 3)`` with their unit axes
    ``outward (K, 3)`` (out of the cylinder), overlap the box of ``half`` extents at ``H_box (4, 4)``:
    the unit normal ``(K, 3)`` (from the box towards the cylinder) along which they overlap least,
    and that overlap ``(K,)`` [m], among each slot's ``normal (K, 3)``, the normals of the box's 3
    faces that face the end's centre, and the directions across the box's edges between two of
    those faces at their least overlap (:data:`_EDGE_NEWTON` Newton steps from the least of
    :data:`_EDGE_SAMPLES` turns, within the quadrant between the two faces: a box's edge on a rim). The overlap
    along a direction is the two's support functions, the end's its disc's (the least overlap of
    two convex shapes over directions is their penetration depth), and for a direction that
    leans out of the end by more than :data:`_END_LEAN` (sine), the cylinder's behind it by that
    excess: the disc alone leaves a box along its axis at once (an end flush with a box's face, or
    past it), the cylinder does not; nor for one along the axis (the cap's, less across it than
    :data:`_RIM_ACROSS`: :func:`rims_on_box` fades the end's slot by the box's way out past the cap)."""
    R, offset = H_box[:3, :3], H_box[:3, 3] - centre  # (K, 3): from each end's centre to the box's
    radius = size[0]
    along = matvec(R.T, offset)  # (K, 3): along the box's axes
    faces = jnp.where(along <= 0, 1.0, -1.0)[:, :, None] * R.T  # (K, 3, 3): the faces towards each end's centre
    reach = half - jnp.abs(along)  # (K, 3): how far past the end's centre each face lies
    lean = matvec(faces, outward)
    # Across the edge between faces i + 1 and i + 2 (u1 cos + u2 sin).
    first, second = np.array([1, 2, 0]), np.array([2, 0, 1])
    p, q, a1, a2 = reach[:, first], reach[:, second], lean[:, first], lean[:, second]
    cos, sin = _EDGE_COS.astype(offset.dtype), _EDGE_SIN.astype(offset.dtype)  # the Newton steps start at the least of these turns
    sampled = (p[..., None] * cos + q[..., None] * sin
               + radius * jnp.sqrt(jnp.maximum(1 - (a1[..., None] * cos + a2[..., None] * sin) ** 2, 1e-30)))  # (K, 3, samples)
    least = jnp.argmin(sampled, axis=-1)  # (K, 3)
    cos, sin = jnp.asarray(cos)[least], jnp.asarray(sin)[least]
    for _ in range(_EDGE_NEWTON):
        tilt, tilt_slope = a1 * cos + a2 * sin, a2 * cos - a1 * sin
        across = jnp.sqrt(jnp.maximum(1 - tilt**2, 1e-12))
        slope = q * cos - p * sin - radius * tilt * tilt_slope / across
        curvature = -p * cos - q * sin - radius * ((tilt_slope**2 - tilt**2) / across + (tilt * tilt_slope) ** 2 / across**3)
        # Turned back by the Newton step's angle through its Cayley rotation (2 atan(step / 2)).
        half_step = 0.5 * jnp.where(curvature > 0, slope / jnp.where(curvature > 0, curvature, 1.0), 0.0)
        cos, sin = cayley_turn(cos, sin, -half_step, 1.0)
        out = (cos < 0) | (sin < 0)  # past a face: at that face (the turn only leaves the quadrant forwards or backwards)
        cos, sin = jnp.where(out, jnp.where(half_step > 0, 1.0, 0.0), cos), jnp.where(out, jnp.where(half_step > 0, 0.0, 1.0), sin)
    turned = cos[..., None] * faces[:, first] + sin[..., None] * faces[:, second]
    candidates = jnp.concatenate([normal[:, None], faces, turned], axis=1)  # (K, 7, 3)
    leaning = dot(candidates, outward[:, None])
    across = jnp.sqrt(jnp.maximum(1 - leaning**2, 1e-30))
    overlaps = (dot(candidates, offset[:, None]) + dot(jnp.abs(matvec(R.T, candidates)), half) + radius * across
                + 2 * size[1] * (jnp.maximum(leaning - _END_LEAN, 0.0) + jnp.maximum(1 - across / _RIM_ACROSS, 0.0)))
    best = jnp.argmin(overlaps, axis=1)
    return jnp.take_along_axis(candidates, best[:, None, None], axis=1)[:, 0], jnp.min(overlaps, axis=1)


def capsule_on_rim(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """2 slots of the capsule a (world pose ``H_a (4, 4)``, ``size_a (3,)``) on the rim of the cap
    of the cylinder b (``H_b``, ``size_b``) that faces it (the cap on the side of the point of b's
    axis nearest to a's segment; the normal from b towards a): the points of a's segment nearest
    to the rim's circle, one from each crossing of the segment's line and the circle seen along
    the axis (from the line's point nearest to the axis where it crosses none), each as a ball of
    a's radius against the cylinder (exact: never deeper than the two overlap). A capsule lying
    across a rim rests on the rim there, one lying across a whole cap on both crossings, one lying
    on a cap on its ends (their collidable points, :mod:`.points`). Each slot fades out as its
    normal's part along the axis, towards the cap's side, falls below :data:`_RIM_LEAN` (a
    point below the cap's plane is the side's, :func:`on_side`); a slot within a radius of an end
    of the segment is shallower by that end's ball's depth in proportion (as
    :func:`.box.end_fades`: the slot comes to repeat the end's), the second within a radius of
    the first by the first's: no slot switches off at depth."""
    R, origin = H_b[:3, :3], H_b[:3, 3]
    radius, length = size_b[0], size_b[1]
    ball, half = size_a[0], size_a[1]
    axis, centre = R.T @ H_a[:3, 2], R.T @ (H_a[:3, 3] - origin)
    up = jnp.zeros_like(axis).at[2].set(1.0)
    _, along = segments_closest(centre, axis, half, jnp.zeros_like(axis), up, length)
    cap = jnp.where(along >= 0, 1.0, -1.0) * length
    a = axis[0] ** 2 + axis[1] ** 2
    b = centre[0] * axis[0] + centre[1] * axis[1]
    crossing = b**2 - a * (centre[0] ** 2 + centre[1] ** 2 - radius**2)
    across = a > _ALONG_AXIS
    safe_a = jnp.where(across, a, 1.0)
    middle = jnp.where(across, -b / safe_a, 0.0)
    spread = jnp.where(across & (crossing > 0), safe_sqrt(crossing) / safe_a, 0.0)
    t = nearest_to_rim(centre, axis, jnp.stack([middle - spread, middle + spread]), radius, cap, _RIM_NEWTON, (-half, half))
    points = jnp.concatenate([centre + t[:, None] * axis, centre + jnp.stack([-half, half])[:, None] * axis])  # the two, then the ends
    distance, normal = jax.vmap(cylinder_distance, (0, None))(points, size_b)
    depth = ball - distance
    # The normal's part along the axis towards the cap's side, from the circle's nearest point.
    outward = jnp.sign(cap) * (points[:2, 2] - cap)
    to_rim = safe_sqrt((safe_sqrt(points[:2, 0] ** 2 + points[:2, 1] ** 2) - radius) ** 2 + outward**2)
    lean = jnp.where(to_rim > 0, outward / jnp.where(to_rim > 0, to_rim, 1.0), 1.0)
    ends = jnp.maximum(depth[2:], 0.0)

    def overlap(gap: jax.Array) -> jax.Array:
        return jnp.clip(1 - gap / ball, 0.0, 1.0)

    rim = jnp.clip(lean / _RIM_LEAN, 0.0, 1.0) * depth[:2] - jnp.maximum(ends[0] * overlap(t + half), ends[1] * overlap(half - t))
    rim = rim.at[1].add(-jnp.maximum(rim[0], 0.0) * overlap(jnp.abs(t[1] - t[0])))
    position = points[:2] - 0.5 * (distance[:2] + ball)[:, None] * normal[:2]
    return Slots(position @ R.T + origin, normal[:2] @ R.T, rim, jnp.ones((2,), bool))
