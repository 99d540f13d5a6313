"""The narrow phase between convex hulls (a box being the hull of its 8 corners, a cylinder the
prism of :data:`CYLINDER_SIDES` sides on its rims): separating
axes over the face normals of both and the cross products of the pairs of their edges that can
meet, and up to :data:`HULL_SLOTS` contacts spread over the overlap (fixed work: no loop, no
sort). Spheres and capsules against hulls: :mod:`.hull_round`.

Hulls come as :class:`HullData` in their shape's frame (a shape's
:class:`~jaxsim_like.dynamics.hulls.Hulls` row, :func:`box_hull` of a box or :func:`cylinder_hull`
of a cylinder); a pair meets in the second hull's frame, the first moved into it (:func:`in_world`
of its pose there, as far as the test needs it). They are padded by
repetition (:mod:`jaxsim_like.dynamics.hulls`), so that padding changes nothing; the two hulls of
a pair may have different counts (a box keeps its 8 corners and 12 edges against a hull of 16
vertices: :func:`first_counts`).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .geometry import first_least, perpendicular, safe_divide, segments_closest, tolerance, unit
from .slots import Slots

HULL_SLOTS = 4
BOX_COUNTS = (8, 6, 4, 12)
"""``(V, F, K, E)`` of a box as a hull."""
CYLINDER_SIDES = 16
"""A cylinder meets hulls as the prism of this many sides whose vertices are on its rims (the
terrain's rim points, :func:`jaxsim_like.parsers.shapes.rim_points`, 16 a ring by default)."""
CYLINDER_COUNTS = (2 * CYLINDER_SIDES, CYLINDER_SIDES + 2, CYLINDER_SIDES, 3 * CYLINDER_SIDES)
"""``(V, F, K, E)`` of a cylinder as a hull."""

_EDGE_PREFERENCE = 0.95  # an edge-edge axis wins only when it overlaps less than 0.95 x the best face axis
_INSIDE = 1e-7  # relative to the hulls' size: vertices this close outside a hull count as inside

_SIGNS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
_BOX_FACES = np.array([  # corner indices of each face, counter-clockwise seen from outside
    [0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
_BOX_NORMALS = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], float)
_BOX_EDGES = np.array([(i, j) for i in range(8) for j in range(i + 1, 8) if np.sum(_SIGNS[i] != _SIGNS[j]) == 1])
# The outward normals of the two faces of each edge: the axes it does not run along, signed as its corners.
_BOX_EDGE_NORMALS = np.array([[np.eye(3)[k] * _SIGNS[i][k] for k in range(3) if _SIGNS[i][k] == _SIGNS[j][k]] for i, j in _BOX_EDGES])


class HullData(NamedTuple):
    """One hull (see :class:`~jaxsim_like.dynamics.hulls.Hulls`): ``vertices (V, 3)``,
    ``planes (F, 4)``, ``faces (F, K, 3)``, ``edges (E, 2, 3)``, ``edge_normals (E, 2, 3)``."""

    vertices: jax.Array
    planes: jax.Array
    faces: jax.Array
    edges: jax.Array
    edge_normals: jax.Array


def _padded(x: jax.Array, count: int, axis: int = 0) -> jax.Array:
    extra = count - x.shape[axis]
    return jnp.concatenate([x, jnp.repeat(jax.lax.slice_in_dim(x, 0, 1, axis=axis), extra, axis=axis)], axis=axis) if extra > 0 else x


def box_hull(half: jax.Array, counts: tuple[int, int, int, int]) -> HullData:
    """The box of ``half`` extents ``(3,)`` as a hull in its frame, padded to ``counts`` ``(V, F, K, E)``
    (each at least :data:`BOX_COUNTS`)."""
    V, F, K, E = counts
    corners = jnp.asarray(_SIGNS, half.dtype) * half
    normals = jnp.asarray(_BOX_NORMALS, half.dtype)
    planes = jnp.concatenate([normals, (jnp.abs(normals) @ half)[:, None]], axis=1)
    faces = _padded(corners[_BOX_FACES], K, axis=1)
    normals = jnp.asarray(_BOX_EDGE_NORMALS, half.dtype)
    return HullData(_padded(corners, V), _padded(planes, F), _padded(faces, F), _padded(corners[_BOX_EDGES], E), _padded(normals, E))


def cylinder_hull(size: jax.Array, counts: tuple[int, int, int, int]) -> HullData:
    """The cylinder of ``size`` ``(radius, half length, 0)`` along z as the prism of
    :data:`CYLINDER_SIDES` sides inscribed in it, a hull in its frame, padded to ``counts``
    ``(V, F, K, E)`` (each at least :data:`CYLINDER_COUNTS`)."""
    V, F, K, E = counts
    n = CYLINDER_SIDES
    angle = 2 * np.pi * np.arange(n) / n
    ring = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    radius, half = size[0], size[1]
    bottom = jnp.concatenate([radius * jnp.asarray(ring, size.dtype), jnp.full((n, 1), -half, size.dtype)], axis=1)
    top = bottom.at[:, 2].set(half)
    corners = jnp.concatenate([bottom, top])
    nxt = (np.arange(n) + 1) % n
    side = np.stack([np.cos(angle + np.pi / n), np.sin(angle + np.pi / n), np.zeros(n)], axis=1)
    normals = np.concatenate([side, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]])
    offsets = jnp.concatenate([jnp.full((n,), np.cos(np.pi / n), size.dtype) * radius, jnp.stack([half, half])])
    planes = jnp.concatenate([jnp.asarray(normals, size.dtype), offsets[:, None]], axis=1)
    side_faces = np.stack([np.arange(n), nxt, n + nxt, n + np.arange(n)], axis=1)  # counter-clockwise seen from outside
    faces = [_padded(corners[side_faces], K, axis=1), _padded(top[None], K, axis=1), _padded(bottom[::-1][None], K, axis=1)]
    edges = np.concatenate([np.stack([np.arange(n), nxt], axis=1), np.stack([n + np.arange(n), n + nxt], axis=1),
                            np.stack([np.arange(n), n + np.arange(n)], axis=1)])
    edge_normals = np.concatenate([np.stack([side, np.tile(normals[n + 1], (n, 1))], axis=1),
                                   np.stack([side, np.tile(normals[n], (n, 1))], axis=1),
                                   np.stack([side[(np.arange(n) - 1) % n], side], axis=1)])
    return HullData(_padded(corners, V), _padded(planes, F), _padded(jnp.concatenate(faces), F), _padded(corners[edges], E),
                    _padded(jnp.asarray(edge_normals, size.dtype), E))


def in_world(H: jax.Array, hull: HullData) -> HullData:
    """``hull`` (its shape's frame) in world axes, the shape at pose ``H (4, 4)``."""
    R, c = H[:3, :3], H[:3, 3]
    normals = hull.planes[:, :3] @ R.T
    return HullData(hull.vertices @ R.T + c, jnp.concatenate([normals, (hull.planes[:, 3] + normals @ c)[:, None]], axis=1),
                    hull.faces @ R.T + c, hull.edges @ R.T + c, hull.edge_normals @ R.T)


def _edge_frames(hull: HullData) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Per edge: its unit direction ``(E, 3)``, its middle ``(E, 3)`` and the unit vectors
    ``(E, 3)`` each that bound the directions it supports (those between its two faces' outward
    normals n1, n2: ``u . s1 >= 0`` and ``u . s2 >= 0`` for ``u`` perpendicular to the edge, with
    ``s1 = c x n1``, ``s2 = n2 x c``, ``c = n1 x n2`` along the edge)."""
    direction, _ = jax.vmap(unit)(hull.edges[:, 1] - hull.edges[:, 0], jnp.zeros_like(hull.edges[:, 0]))
    n1, n2 = hull.edge_normals[:, 0], hull.edge_normals[:, 1]
    c = jnp.cross(n1, n2)
    length = jnp.sqrt(jnp.maximum(jnp.sum(c**2, axis=-1, keepdims=True), 1e-30))
    return direction, jnp.mean(hull.edges, axis=1), jnp.cross(c, n1) / length, jnp.cross(n2, c) / length


def _edge_pairs(a: tuple[jax.Array, ...], b: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Edge pairs of a and b from their :func:`_edge_frames` ``a`` and ``b``, broadcast against
    each other (``(E_a, 1, 3)`` and ``(E_b, 3)``: every pair; ``(3,)`` each: one pair). Returns
    whether each pair counts (both edges support its axis ``+-(d_a x d_b)``, a's edge along the
    axis reversed and b's along it: their Gauss maps cross), the sign of that axis from b
    towards a, and its overlap as ``signed / sqrt(squared)`` (the distance between the edges'
    lines along the unit axis): ``signed`` and ``squared``. Scalar triple products, written
    elementwise: as products of ``(E_a, 3)`` by ``(3, E_b)`` matrices XLA's CPU backend runs
    them several times slower."""
    (d_a, middle_a, s1_a, s2_a), (d_b, middle_b, s1_b, s2_b) = a, b

    def dot(x, y):
        return x[..., 0] * y[..., 0] + x[..., 1] * y[..., 1] + x[..., 2] * y[..., 2]

    cosine = dot(d_a, d_b)
    p1, p2 = dot(jnp.cross(s1_a, d_a), d_b), dot(jnp.cross(s2_a, d_a), d_b)  # (d_a x d_b) . s_a
    q1, q2 = dot(d_a, jnp.cross(d_b, s1_b)), dot(d_a, jnp.cross(d_b, s2_b))  # (d_a x d_b) . s_b
    reach = dot(d_a, jnp.cross(d_b, middle_b)) - dot(jnp.cross(middle_a, d_a), d_b)  # (d_a x d_b) . (middle_b - middle_a)
    slack = tolerance(cosine.dtype, 1e-9)  # the triple products' rounding: edges that just meet count
    plus = (p1 <= slack) & (p2 <= slack) & (q1 >= -slack) & (q2 >= -slack)  # a supports along -(d_a x d_b), b along +
    minus = (p1 >= -slack) & (p2 >= -slack) & (q1 <= slack) & (q2 <= slack)
    squared = 1.0 - cosine**2
    usable = squared > tolerance(cosine.dtype, 1e-12)  # else parallel within rounding: no axis of their own
    return usable & (plus | minus), jnp.where(plus, 1.0, -1.0), jnp.where(plus, reach, -reach), jnp.where(usable, squared, 1.0)


def _axes(a: HullData, b: HullData) -> tuple[jax.Array, jax.Array, tuple[jax.Array, jax.Array], jax.Array, jax.Array]:
    """Candidate axes: the ``F`` face normals of a (pointing into a: b to a) and the ``F`` of b,
    with their overlaps (the normal from b towards a); the edge pair of least overlap
    (:func:`_edge_pairs`: a's edge and b's edge), that overlap (infinite where no edge pair
    counts) and its axis' sign from b towards a."""
    face = jnp.concatenate([-a.planes[:, :3], b.planes[:, :3]])
    # Products of axes by vertices apart from what reduces them: fused into it, XLA's CPU backend
    # recomputes them element by element, many times slower.
    face_a, face_b = jax.lax.optimization_barrier((face @ a.vertices.T, face @ b.vertices.T))
    face_overlap = jnp.max(face_b, axis=1) - jnp.min(face_a, axis=1)
    frames_a, frames_b = _edge_frames(a), _edge_frames(b)
    counts, _, signed, squared = _edge_pairs(tuple(x[:, None] for x in frames_a), frames_b)
    # overlap |overlap| = signed |signed| / squared, monotonic in the overlap: no square root per pair
    edge = first_least(jnp.where(counts, signed * jnp.abs(signed) / squared, jnp.inf).reshape(-1))
    first, second = jnp.divmod(edge, frames_b[0].shape[0])
    counts, sign, signed, squared = _edge_pairs(tuple(x[first] for x in frames_a), tuple(x[second] for x in frames_b))
    return face, face_overlap, (first, second), jnp.where(counts, signed / jnp.sqrt(squared), jnp.inf), sign


def _inside(points: jax.Array, hull: HullData, direction: jax.Array, slack: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Which of ``points (P, 3)`` lie in ``hull`` (inclusive, by ``slack``), and how far each
    moves along the unit ``direction`` before it leaves it."""
    normals, offsets = hull.planes[:, :3], hull.planes[:, 3]
    distance = points @ normals.T - offsets  # (P, F), <= 0 inside
    inside = jnp.all(distance <= slack, axis=1)
    rate = normals @ direction  # (F,)
    leaving = rate > tolerance(rate.dtype, 1e-9)  # else parallel to the direction within rounding
    exits = jnp.where(leaving, safe_divide(-distance, jnp.where(leaving, rate, 1.0), jnp.inf), jnp.inf)
    return inside, jnp.maximum(jnp.min(exits, axis=1), 0.0)


def _crossings(face_a: jax.Array, face_b: jax.Array, normal: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Where the sides of polygons ``face_a (K_a, 3)`` and ``face_b (K_b, 3)`` cross seen along
    ``normal``: points on a's and b's sides ``(K_a K_b, 3)`` each, and whether they cross
    strictly inside both sides."""
    t1 = perpendicular(normal)
    plane = jnp.stack([t1, jnp.cross(normal, t1)])
    a0, a1 = face_a[:, None], jnp.roll(face_a, -1, axis=0)[:, None]
    b0, b1 = face_b[None], jnp.roll(face_b, -1, axis=0)[None]
    shape = (face_a.shape[0], face_b.shape[0], 2)
    u, w, r = (jnp.broadcast_to(x, shape) for x in ((a1 - a0) @ plane.T, (b1 - b0) @ plane.T, (b0 - a0) @ plane.T))

    def cross2(x, y):
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]

    det = cross2(u, w)
    ok = jnp.abs(det) > tolerance(u.dtype, 1e-9) * jnp.sqrt(jnp.sum(u**2, -1) * jnp.sum(w**2, -1))
    alpha = safe_divide(cross2(r, w), jnp.where(ok, det, 1.0))
    beta = safe_divide(cross2(r, u), jnp.where(ok, det, 1.0))
    margin = tolerance(u.dtype, 1e-7)
    inside = ok & (alpha > margin) & (alpha < 1 - margin) & (beta > margin) & (beta < 1 - margin)
    on_a = (a0 + alpha[..., None] * (a1 - a0)).reshape(-1, 3)
    on_b = (b0 + beta[..., None] * (b1 - b0)).reshape(-1, 3)
    return on_a, on_b, inside.reshape(-1)


def _spread(position: jax.Array, depth: jax.Array, holds: jax.Array, normal: jax.Array) -> tuple[jax.Array, jax.Array]:
    """:data:`HULL_SLOTS` of the candidates that ``hold`` a contact, spread over their patch: the
    deepest, the farthest from it, the farthest from the line of the two on either side. Returns
    their indices and which were found (a candidate no farther than a tolerance repeats one)."""
    size = jnp.max(jnp.where(holds[:, None], jnp.abs(position - position[0]), 0.0)) + 1.0
    eps = tolerance(position.dtype, 1e-9) * size
    first = jnp.argmax(jnp.where(holds, depth, -jnp.inf))
    p1 = position[first]
    flat = position - jnp.outer((position - p1) @ normal, normal)
    far = jnp.sum((flat - flat[first]) ** 2, axis=-1)
    second = jnp.argmax(jnp.where(holds, far, -1.0))
    line = flat[second] - flat[first]
    side = jnp.cross(line, flat - flat[first]) @ normal
    third = jnp.argmax(jnp.where(holds, jnp.abs(side), -1.0))
    opposite = -jnp.where(side[third] >= 0, 1.0, -1.0) * side
    fourth = jnp.argmax(jnp.where(holds, opposite, -1.0))
    length = jnp.sqrt(far[second])
    found = jnp.stack([jnp.any(holds), far[second] > eps**2, jnp.abs(side[third]) > eps * length,
                       opposite[fourth] > eps * length])
    return jnp.stack([first, second, third, fourth]), found & holds[jnp.stack([first, second, third, fourth])]


def hull_hull(a: HullData, b: HullData, H_a: jax.Array | None = None) -> Slots:
    """:data:`HULL_SLOTS` slots of hulls a and b (in one frame's axes, those of the slots) along one separating-axis normal
    (from b towards a; the axis of least overlap among both hulls' face normals and the cross
    products of their edges that can meet, an edge axis only when clearly better), chosen among the
    candidates below in this order:

    - face axis: the ``V_a`` vertices of a inside b (inclusive), each as deep as it moves along the
      normal before it leaves b, the ``V_b`` of b inside a likewise, and the ``K_a x K_b`` crossings of
      the sides of a's face and b's face that meet along the normal (seen along it);
    - edge axis: the closest points of the two edges that meet (the hulls' supports along it:
      :func:`_axes`), at the axis' overlap.

    The slots hold the deepest candidate and three spread around it (:func:`_spread`); each
    filled slot's feature is its candidate's place in the order above, empty slot ``k`` has
    feature ``V_a + V_b + K_a K_b + 1 + k`` (:func:`features`). Depths are positive when penetrating.
    With ``H_a (4, 4)``, a comes in its own frame at that pose in b's: only what the test reads of
    it moves into b's axes (of its faces, the one that meets b)."""
    faces_a, into_b = a.faces, lambda x: x
    if H_a is not None:
        a = in_world(H_a, a._replace(faces=a.faces[:0]))
        into_b = lambda x: x @ H_a[:3, :3].T + H_a[:3, 3]  # noqa: E731
    face_axes, face_overlap, (first, second), edge_overlap, edge_sign = _axes(a, b)
    face = jnp.argmin(face_overlap)
    use_edge = edge_overlap < _EDGE_PREFERENCE * face_overlap[face]
    edge_axis = edge_sign * unit(jnp.cross(a.edges[first, 1] - a.edges[first, 0], b.edges[second, 1] - b.edges[second, 0]),
                                      face_axes[face])[0]

    def on_edge(segment):
        axis, length = unit(segment[1] - segment[0], jnp.zeros(3, segment.dtype))
        return 0.5 * (segment[0] + segment[1]), axis, 0.5 * length

    centre_a, axis_a, half_a = on_edge(a.edges[first])
    centre_b, axis_b, half_b = on_edge(b.edges[second])
    s, t = segments_closest(centre_a, axis_a, half_a, centre_b, axis_b, half_b)
    meeting = 0.5 * (centre_a + s * axis_a + centre_b + t * axis_b)
    normal = jnp.where(use_edge, edge_axis, face_axes[face])
    overlap = jnp.where(use_edge, edge_overlap, face_overlap[face])

    size = jnp.max(jnp.abs(a.vertices - a.vertices[0])) + jnp.max(jnp.abs(b.vertices - b.vertices[0]))
    slack = tolerance(a.vertices.dtype, _INSIDE) * size + 1e-12
    a_in_b, depth_a = _inside(a.vertices, b, normal, slack)
    b_in_a, depth_b = _inside(b.vertices, a, -normal, slack)
    face_a = into_b(faces_a[jnp.argmin(a.planes[:, :3] @ normal)])
    face_b = b.faces[jnp.argmax(b.planes[:, :3] @ normal)]
    cross_a, cross_b, crossing = _crossings(face_a, face_b, normal)
    depth_x = (cross_b - cross_a) @ normal

    face_case = ~use_edge
    position = jnp.concatenate([a.vertices + 0.5 * depth_a[:, None] * normal, b.vertices - 0.5 * depth_b[:, None] * normal,
                                0.5 * (cross_a + cross_b), meeting[None]])
    depth = jnp.concatenate([depth_a, depth_b, depth_x, overlap[None]])
    valid = jnp.concatenate([a_in_b & face_case, b_in_a & face_case, crossing & face_case, use_edge[None]])
    holds = valid & (depth > 0) & (overlap > 0)
    picked, filled = _spread(position, depth, holds, normal)
    candidates = depth.shape[0]
    return Slots(
        jnp.where(filled[:, None], position[picked], a.vertices[0]),
        jnp.broadcast_to(normal, (HULL_SLOTS, 3)),
        jnp.where(filled, depth[picked], jnp.minimum(overlap, 0.0)),
        filled,
        jnp.where(filled, picked, candidates + jnp.arange(HULL_SLOTS)).astype(jnp.int32),
    )


def features(counts_a: tuple[int, int, int, int], counts_b: tuple[int, int, int, int]) -> int:
    """The candidates of :func:`hull_hull` plus its empty slots, for hulls a and b of ``counts_a``
    and ``counts_b`` ``(V, F, K, E)``."""
    (V_a, _, K_a, _), (V_b, _, K_b, _) = counts_a, counts_b
    return V_a + V_b + K_a * K_b + 1 + HULL_SLOTS


def first_counts(kinds: Sequence[str], hull_counts: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The ``(V, F, K, E)`` that the first shapes of the pair kinds ``kinds`` of the family of hulls
    (``"box-hull"``, ``"cylinder-hull"``, ``"hull-hull"``, whose second shapes are hulls of
    ``hull_counts``) are padded to in their one narrow phase: the most of a box's where boxes meet
    hulls, a cylinder's prism's where cylinders do and ``hull_counts`` where hulls meet hulls.
    A box against hulls alone keeps its 8 corners and 12 edges (the box-hull pairs cost half as much
    as with the box padded to the hulls' counts)."""
    own = {"box": BOX_COUNTS, "cylinder": CYLINDER_COUNTS, "hull": hull_counts}
    return tuple(int(c) for c in np.max([own[kind.split("-")[0]] for kind in kinds], axis=0))
