"""The collision query of a world: every candidate pair of the table, culled and tested."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ...dynamics import spatial
from ...dynamics.hulls import Hulls
from ...dynamics.model import Model
from ...dynamics.tree import BOX, CAPSULE, CYLINDER, HULL, SPHERE
from ...parsers.shapes import RIM_COLUMNS
from ...pytree import pytree_dataclass
from ..rims import Rings
from ..rims import turned as turned_points
from .broad import bounding_radius, half_extents, near_along_centres, overlapping, segments_near
from .geometry import to_frame
from .hull import HullData, box_hull, cylinder_hull, first_counts, hull_hull, in_world
from .ellipsoid import hull_ellipsoid
from .hull_round import round_hull
from .kinds import FAMILIES, HULL_ELLIPSOIDS, HULLS, KINDS, POINT_CHUNK, POINTS, ROUND_HULLS
from .points import KIND_CODES, signed_distance
from .slots import Slots
from .table import CollisionTable, PairGroup


@pytree_dataclass()
class Contacts:
    """``C`` contact slots (``C = table.size``, static), world axes.

    ``link_a, link_b (C,)``: global link indices (int32; ``table.link_offsets[m] + link``);
    ``position (C, 3)`` [m] midway between the two surfaces; unit ``normal (C, 3)`` from b towards a
    (a is pushed along +normal); ``depth (C,)`` [m], positive when penetrating; ``active (C,)``:
    a real contact (``depth > 0``); ``slot (C,)``: the place of the slot's contact among the
    tangential memories of every candidate pair (``table.candidate_slots`` of them, in table
    order: the same pair and contact feature keep it from one call to the next, culled or not,
    whichever slot holds it; :attr:`.slots.Slots.feature`; ``table.candidate_slots`` or more: an
    entry of a budget that no overlapping pair filled); ``radius_a, radius_b (C,)`` [m]: the
    radius of the round surface of a and of b that the contact lies on, its centre of curvature
    that far from the contact along ``+normal`` for a and ``-normal`` for b (a sphere's, a
    capsule's, a cylinder's side's, a swept point's; 0 at a face, an edge or a corner; None:
    0 everywhere). Inactive slots have ``depth <= 0`` and finite values."""

    link_a: jax.Array
    link_b: jax.Array
    position: jax.Array
    normal: jax.Array
    depth: jax.Array
    active: jax.Array
    slot: jax.Array
    radius_a: jax.Array | None = None
    radius_b: jax.Array | None = None



class Geometry(NamedTuple):
    """The collision geometry of a world's models, in the table's global order: each shape's
    ``L_H_S (S, 4, 4)`` in its link and ``size (S, 3)`` [m]; each collidable point's centre
    ``(P, 3)`` [m] in its link frame and ``radius (P,)`` [m]; the shapes' ``hulls``
    (:class:`~...dynamics.hulls.Hulls`, ``S`` rows; None without hulls, or where the table has
    no pairs of hulls: :func:`query` needs them only then); the points' ``rims (P, 9)`` (each
    point's ring's :attr:`~...dynamics.model.Model.ring_rim`, zero rows for points on no rim; None: none is),
    whose rings turn towards the shape they meet (:mod:`..rims`)."""

    shape_transform: jax.Array
    shape_size: jax.Array
    points: jax.Array
    point_radius: jax.Array
    hulls: Hulls | None = None
    rims: jax.Array | None = None

    @staticmethod
    def of(models: Sequence[Model], dtype: Any) -> "Geometry":
        """The geometry of ``models`` (those of the table, in order) in ``dtype``."""
        return Geometry(
            _concatenate([m.shape_transform for m in models], (0, 4, 4), dtype),
            _concatenate([m.shape_size for m in models], (0, 3), dtype),
            _concatenate([m.collidable_points for m in models], (0, 3), dtype),
            _concatenate([m.point_radius for m in models], (0,), dtype),
            joined_hulls([m.shape_hulls for m in models], dtype),
            joined_rims([None if m.ring_rim is None else m.ring_rim[m.point_ring] for m in models], [len(m.point_link) for m in models], dtype),
        )


def joined_rims(rims: Sequence[jax.Array | None], counts: Sequence[int], dtype: Any) -> jax.Array | None:
    """The ``rims`` ``(P_m, 9)`` of models of ``counts`` points end to end, zero rows for a model
    without (None: no model has any)."""
    if all(r is None for r in rims):
        return None
    return _concatenate([jnp.zeros((n, RIM_COLUMNS)) if r is None else r for r, n in zip(rims, counts)], (0, RIM_COLUMNS), dtype)


def joined_hulls(hulls: Sequence[Hulls], dtype: Any) -> Hulls | None:
    """The rows of ``hulls`` end to end, padded to common counts (None: no hull among them)."""
    counts = tuple(int(c) for c in np.max([h.counts for h in hulls], axis=0)) if hulls else (0, 0, 0, 0)
    if 0 in counts:
        return None
    padded = [h.padded(counts) for h in hulls]
    return Hulls(*(jnp.concatenate([getattr(h, field.name).astype(dtype) for h in padded]) for field in dataclasses.fields(Hulls)))


def collide(table: CollisionTable, models: Sequence[Model], W_H_L: Sequence[jax.Array]) -> Contacts:
    """The :class:`Contacts` of the world of ``models`` (those of ``table``) with link poses
    ``W_H_L[m] (N_m, 4, 4)`` in the world frame (:func:`query` of their :class:`Geometry`)."""
    if len(models) != len(W_H_L) or len(models) != len(table.link_offsets):
        raise ValueError(f"collide needs one pose array per model of the table ({len(table.link_offsets)}), got "
                         f"{len(models)} models and {len(W_H_L)} pose arrays")
    for m, model in enumerate(models):
        links, shapes, points = model.number_of_links, len(model.shape_kind), len(model.point_link)
        if (links, shapes, points) != table.counts(m):
            raise ValueError(
                f"model {m} ({model.name!r}: {links} links, {shapes} shapes, {points} points) is not the model the "
                f"table was built for ({table.counts(m)})"
            )
    dtype = jnp.result_type(*W_H_L)
    return query(table, Geometry.of(models, dtype), _concatenate(list(W_H_L), (0, 4, 4), dtype))[0]


def query(table: CollisionTable, geometry: Geometry, W_H_L: jax.Array, margin: jax.Array | None = None) -> tuple[Contacts, jax.Array]:
    """The :class:`Contacts` of the world of ``table`` with its ``geometry`` and every link's pose
    ``W_H_L (L, 4, 4)`` (global link order, world frame), their depths deeper by ``margin
    (table.candidate_slots,)`` [m] per candidate memory where given (a contact pair's margin: its
    surfaces touch that far apart, where the narrow phase reports them apart), and the overflow ``(G,)`` (int32) of each
    of the table's pair groups: its candidate pairs whose bounding spheres overlap (that may touch)
    and that did not fit its budget (``keep``; zero: none was dropped). Each pair kind keeps at
    most ``keep`` of its pairs whose bounding spheres overlap (:func:`.broad.overlapping`; all
    of its pairs when it has no more); the kept pairs of every kind of one family
    (:data:`.kinds.FAMILIES`) meet its narrow phase together."""
    dtype = W_H_L.dtype
    shape_link = np.asarray(table.shape_link, dtype=np.int32)
    point_link = np.asarray(table.point_link, dtype=np.int32)
    W_H_S = W_H_L[shape_link] @ geometry.shape_transform.astype(dtype)
    sizes = geometry.shape_size.astype(dtype)
    points = jnp.einsum("pij,pj->pi", W_H_L[point_link, :3, :3], geometry.points.astype(dtype)) + W_H_L[point_link, :3, 3]
    point_radius = geometry.point_radius.astype(dtype)
    code = np.asarray(table.shape_code, dtype=np.int32)
    radius = bounding_radius(code, sizes) if code.size else jnp.zeros((0,), dtype)
    extent = half_extents(code, sizes, W_H_S[:, :3, :3], radius) if code.size else jnp.zeros((0, 3), dtype)
    if not table.groups:
        empty = jnp.zeros((0,), dtype)
        return Contacts(jnp.zeros((0,), jnp.int32), jnp.zeros((0,), jnp.int32), jnp.zeros((0, 3), dtype), jnp.zeros((0, 3), dtype),
                        empty, jnp.zeros((0,), bool), jnp.zeros((0,), jnp.int32), empty, empty), jnp.zeros((0,), jnp.int32)
    starts = np.cumsum([0] + [group.candidates * group.memory for group in table.groups])
    slack = jnp.zeros((), dtype) if margin is None or not margin.size else jnp.maximum(jnp.max(margin), 0.0)
    hulls = None
    if 0 not in table.hull_counts:
        if geometry.hulls is None:
            raise ValueError("the collision table has pairs of hulls: its geometry needs the models' hulls")
        hulls = geometry.hulls.padded(table.hull_counts)
        if hulls.counts != table.hull_counts:
            raise ValueError(f"the geometry's hulls {hulls.counts} exceed the table's {table.hull_counts}")
    culled = _culled(table.groups, table.candidate_slots - starts[:-1], W_H_S, sizes, points, point_radius, radius, extent,
                     slack, table.point_ring, code, hulls)
    rims = None
    if geometry.rims is not None:
        rows = geometry.rims.astype(dtype)
        rims = _PointRims(Rings.placed(rows, W_H_L[point_link]), Rings.of(rows).at(geometry.points.astype(dtype)),
                          jnp.any(rows[:, 3:6] != 0, axis=-1))
    results = _narrow_phases(table.groups, culled, W_H_S, sizes, points, point_radius, code, hulls, rims)
    parts = [_contacts(group, kept, result, start, shape_link, point_link, margin,
                       _radii(group, kept, sizes, point_radius, code, rims, result))
             for group, kept, result, start in zip(table.groups, culled, results, starts)]
    names = [field.name for field in dataclasses.fields(Contacts)]
    contacts = Contacts(**{name: jnp.concatenate([getattr(p, name) for p in parts], axis=0) for name in names})
    return contacts, jnp.stack([kept.overflow for kept in culled])


def _concatenate(arrays: list[jax.Array], empty_shape: tuple[int, ...], dtype) -> jax.Array:
    arrays = [jnp.asarray(a, dtype) for a in arrays if a.shape[0]]
    return jnp.concatenate(arrays, axis=0) if arrays else jnp.zeros(empty_shape, dtype)


class _Culled(NamedTuple):
    """The pairs of a group that meet its narrow phase: ``first (k,)`` shapes (points: ``(k,
    POINT_CHUNK)``) and ``second (k,)`` shapes (numpy when every candidate is kept, else traced),
    which slots hold a real pair ``real (k, slots)``, each pair's candidate index ``slot_kept (k,)``
    (past every memory for an empty entry of the budget) and the ``overflow ()``; of points where
    some lie on rings of a cylinder's rim, ``rings``: the first point of each ring in the chunk
    ``(k, m)`` (the chunk's first point where it has fewer rings) and the place of each point's
    ring among them ``(k, POINT_CHUNK)`` (0 for a point on no ring), None elsewhere."""

    first: Any
    second: Any
    real: Any
    slot_kept: Any
    overflow: jax.Array
    rings: tuple[Any, Any] | None = None


def _culled(groups: Sequence[PairGroup], memories: np.ndarray, W_H_S, sizes, points, point_radius, radius, extent,
            slack: jax.Array, point_ring: Sequence[int] = (), code: np.ndarray | None = None, hulls: Hulls | None = None) -> list[_Culled]:
    """The :class:`_Culled` pairs of each of the ``groups``, whose tangential memories are the
    first of the ``memories[g]`` from its start to the table's end, with the rings of their points
    (``point_ring``, :attr:`.table.CollisionTable.point_ring`); the groups with more candidates
    than their budget are culled together (:func:`.broad.overlapping`; pairs of spheres and
    capsules only where they lie within ``slack`` [m] of touching, :func:`.broad.segments_near`,
    pairs with a hull only where the line through their origins does not separate them by more,
    :func:`.broad.near_along_centres` of the shapes' kinds ``code`` and ``hulls``),
    the candidates of a group with a link welded to the world into that group's budget for them
    (:attr:`.table.PairGroup.static`)."""
    static, rings = [], []
    for group in groups:
        kind = KINDS[group.kind]
        if group.kind == POINTS:
            first = np.asarray(group.first, dtype=np.int32).reshape(-1, kind.slots)
            real = first >= 0
            first = np.where(real, first, first[:, :1])  # pad with the chunk's first point, masked below
        else:
            first = np.asarray(group.first, dtype=np.int32)
            real = np.ones(first.shape + (kind.slots,), bool)
        static.append((first, np.asarray(group.second, dtype=np.int32), real))
        rings.append(_chunk_rings(first, real, np.asarray(point_ring, dtype=np.int32)) if group.kind == POINTS and len(point_ring) else None)
    culled: list[_Culled | None] = [
        _Culled(first, second, real, np.arange(group.candidates, dtype=np.int32), jnp.zeros((), jnp.int32), ring)
        if group.keep == group.candidates else None for group, (first, second, real), ring in zip(groups, static, rings)]
    cut = [g for g, c in enumerate(culled) if c is None]
    if not cut:
        return culled
    # Each group's candidates between moving links, then those with a welded link, culled into
    # budgets of their own: ``(group, first candidate, end, budget)`` per segment that has any.
    segments = []
    for g in cut:
        moving = groups[g].candidates - groups[g].static[0]
        segments += [(g, start, end, keep) for start, end, keep in
                     ((0, moving, groups[g].keep - groups[g].static[1]), (moving, groups[g].candidates, groups[g].static[1]))
                     if end > start]
    bounds = {g: _first_bounds(groups[g], static[g][0], static[g][2], W_H_S, points, point_radius, radius, extent) for g in cut}
    second = np.concatenate([static[g][1][start:end] for g, start, end, _ in segments])
    keeps = [keep for *_, keep in segments]
    near = _near([(groups[g].kind, *(static[g][i][start:end] for i in (0, 1))) for g, start, end, _ in segments],
                 W_H_S, sizes, slack, code, hulls)
    kept, held, overflow = overlapping(*(jnp.concatenate([bounds[g][i][start:end] for g, start, end, _ in segments]) for i in range(3)),
                                       W_H_S[second, :3, 3], radius[second], extent[second],
                                       [end - start for _, start, end, _ in segments], keeps, near)
    ends = np.cumsum(keeps)
    for g in cut:
        parts = [(start + kept[end - keep : end], held[end - keep : end], spilled)
                 for (h, start, _, keep), end, spilled in zip(segments, ends, overflow) if h == g]
        mine, taken = (jnp.concatenate([part[i] for part in parts]) for i in range(2))
        first, second, real = static[g]
        empty = -(-int(memories[g]) // groups[g].memory)  # an empty entry: past every memory
        culled[g] = _Culled(jnp.asarray(first)[mine], jnp.asarray(second)[mine], jnp.asarray(real)[mine] & taken[:, None],
                            jnp.where(taken, mine, empty), sum(part[2] for part in parts),
                            None if rings[g] is None else tuple(jnp.asarray(x)[mine] for x in rings[g]))
    return culled


_SEGMENTS = ("sphere-sphere", "sphere-capsule", "capsule-capsule")
"""The pair kinds of two segments with radii, whose broad phase tests their distance (:func:`.broad.segments_near`)."""


def _near(segments: Sequence[tuple[str, np.ndarray, np.ndarray]], W_H_S, sizes, slack: jax.Array, code: np.ndarray | None,
          hulls: Hulls | None) -> jax.Array | None:
    """Per candidate of the ``segments`` (each its pair kind, first and second shapes, end to end):
    whether it may lie within ``slack`` [m] of touching, by :func:`.broad.segments_near` where its
    kind is of :data:`_SEGMENTS` and by :func:`.broad.near_along_centres` where it has a hull
    (the shapes' kinds ``code`` and ``hulls``), else True ``(K,)``; None where no kind is tested."""
    tests = (  # (the kinds a test takes, the test of their first and second shapes)
        (lambda kind: kind in _SEGMENTS, lambda a, b: segments_near(W_H_S[a], sizes[a], W_H_S[b], sizes[b], slack)),
        (lambda kind: hulls is not None and KINDS[kind].family in (HULLS, ROUND_HULLS, HULL_ELLIPSOIDS),
         lambda a, b: near_along_centres(code[a], W_H_S[a], sizes[a], hulls.vertices[a], code[b], W_H_S[b], sizes[b], hulls.vertices[b], slack)),
    )
    tested = [None] * len(segments)
    for takes, test in tests:
        mine = [k for k, (kind, *_) in enumerate(segments) if takes(kind)]
        if mine:
            near = test(*(np.concatenate([segments[k][i] for k in mine]) for i in (1, 2)))
            for k, end in zip(mine, np.cumsum([len(segments[k][2]) for k in mine])):
                tested[k] = near[end - len(segments[k][2]) : end]
    if all(t is None for t in tested):
        return None
    return jnp.concatenate([jnp.ones(len(pair[2]), bool) if t is None else t for pair, t in zip(segments, tested)])


def _chunk_rings(first: np.ndarray, real: np.ndarray, point_ring: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The :attr:`_Culled.rings` of the chunks of points ``first (C, POINT_CHUNK)`` (real where
    ``real``) with their global rings ``point_ring (P,)`` (``-1``: none); None where no chunk
    holds a point on a ring."""
    ring = np.where(real, point_ring[first], -1)
    if not np.any(ring >= 0):
        return None
    leads = [[j for j in range(ring.shape[1]) if ring[c, j] >= 0 and ring[c, j] not in ring[c, :j]] or [0] for c in range(len(ring))]
    width = max(len(lead) for lead in leads)
    lead = np.array([lead + [lead[0]] * (width - len(lead)) for lead in leads], dtype=np.int32)
    which = np.array([[lead[c].tolist().index(int(np.flatnonzero(ring[c] == r)[0])) if r >= 0 else 0 for r in ring[c]]
                      for c in range(len(ring))], dtype=np.int32)
    return np.take_along_axis(first, lead, axis=1), which


def _joined(arrays: list[Any]) -> Any:
    """The index ``arrays`` end to end: numpy (static) if every one is."""
    if all(isinstance(a, np.ndarray) for a in arrays):
        return np.concatenate(arrays)
    return jnp.concatenate([jnp.asarray(a) for a in arrays])


NARROW_CHUNK = 16
"""The pairs of a family of hulls evaluated at once (:func:`_evaluated`): a chunk of its budget
that holds no pair is skipped. The other families' pairs cost too little for it: on the 125-body
pile without hulls the chunks of every family ran as fast as one ``vmap`` (within the noise)."""


def _evaluated(kernel: Callable, real: Any, *args: Any) -> Slots:
    """``jax.vmap(kernel)(*args)``: the slots of ``K`` pairs (the leading axis of every leaf of
    ``args``), of which ``real (K,)`` hold a pair. A kind's pairs fill its budget from its start
    (:func:`.broad.overlapping`), so its empty entries lie together at its end: with more than
    ``2 NARROW_CHUNK`` pairs, the chunks of ``NARROW_CHUNK`` that hold none are skipped (a
    ``lax.cond`` in a ``lax.scan``), their slots invalid, apart and along +z. Under ``vmap``
    (worlds in a batch) the condition becomes a selection and every chunk runs."""
    count = real.shape[0]
    if isinstance(real, np.ndarray) or count <= 2 * NARROW_CHUNK:
        return jax.vmap(kernel)(*args)
    chunks = -(-count // NARROW_CHUNK)
    extra = chunks * NARROW_CHUNK - count

    def split(x):
        x = jnp.asarray(x)
        return jnp.concatenate([x, jnp.repeat(x[:1], extra, axis=0)]).reshape((chunks, NARROW_CHUNK) + x.shape[1:])

    held = jnp.concatenate([jnp.asarray(real), jnp.zeros(extra, bool)]).reshape(chunks, NARROW_CHUNK).any(axis=1)
    parts = jax.tree.map(split, args)
    shapes = jax.eval_shape(jax.vmap(kernel), *jax.tree.map(lambda x: x[0], parts))
    empty = Slots(jnp.zeros(shapes.position.shape, shapes.position.dtype),
                  jnp.broadcast_to(jnp.asarray([0.0, 0.0, 1.0], shapes.normal.dtype), shapes.normal.shape),
                  jnp.full(shapes.depth.shape, -1.0, shapes.depth.dtype), jnp.zeros(shapes.valid.shape, bool),
                  None if shapes.feature is None else jnp.zeros(shapes.feature.shape, shapes.feature.dtype))

    def chunk(_, part):
        arguments, holds = part
        return None, jax.lax.cond(holds, lambda a: jax.vmap(kernel)(*a), lambda a: empty, arguments)

    _, slots = jax.lax.scan(chunk, None, (parts, held))
    return jax.tree.map(lambda x: x.reshape((chunks * NARROW_CHUNK,) + x.shape[2:])[:count], slots)


def _narrow_phases(groups: Sequence[PairGroup], culled: list[_Culled], W_H_S, sizes, points, point_radius, code,
                   hulls: Hulls | None, rims: "_PointRims | None" = None) -> list[Slots]:
    """The :class:`.slots.Slots` ``(keep, slots)`` of each group's kept pairs, each family's
    narrow phase evaluated once for the pairs of all its kinds (pairs of hulls with the shapes'
    ``hulls``; points on rims, ``rims`` in world axes, turned towards each shape they meet)."""
    results: list[Slots | None] = [None] * len(groups)
    families: dict[str, list[int]] = {}
    for g, group in enumerate(groups):
        families.setdefault(KINDS[group.kind].family, []).append(g)
    own = {  # the families with a narrow phase of their own data: (groups, culled) -> Slots per group
        POINTS: lambda kinds, kept: _swept_points(kinds, kept, W_H_S, sizes, points, point_radius, code, rims),
        HULLS: lambda kinds, kept: _hull_pairs(kinds, kept, W_H_S, sizes, code, hulls),
        ROUND_HULLS: lambda kinds, kept: _round_hulls(kinds, kept, W_H_S, sizes, hulls),
        HULL_ELLIPSOIDS: lambda kinds, kept: _hull_ellipsoids(kinds, kept, W_H_S, sizes, hulls),
    }
    for family, members in families.items():
        if family in own:
            found = own[family]([groups[g] for g in members], [culled[g] for g in members])
        else:
            kinds = [KINDS[groups[g].kind] for g in members]
            a = _joined([culled[g].second if k.swapped else culled[g].first for g, k in zip(members, kinds)])
            b = _joined([culled[g].first if k.swapped else culled[g].second for g, k in zip(members, kinds)])
            cylinders = [np.concatenate([np.full(groups[g].keep, k.cylinders[i]) for g, k in zip(members, kinds)]) for i in (0, 1)]
            shapes = (W_H_S[a], sizes[a], W_H_S[b], sizes[b])
            found = _per_group([groups[g] for g in members], jax.vmap(FAMILIES[family].kernel)(*shapes, *cylinders),
                               FAMILIES[family].refine, shapes)
        for g, result in zip(members, found):
            results[g] = result
    return results


def _per_group(groups: Sequence[PairGroup], slots: Slots, refine: Callable | None = None, shapes: tuple = ()) -> list[Slots]:
    """The slots of each of ``groups`` (its ``keep`` pairs, in order) of one family's ``slots``,
    its kind's (:meth:`.kinds.Kind.taken`); those of a kind that asks for it (:attr:`.kinds.Kind.refined`)
    first made by the family's ``refine`` of them and their ``shapes`` (the family's ``H_a, size_a,
    H_b, size_b`` of every pair)."""
    ends = np.cumsum([0] + [group.keep for group in groups])
    found = []
    for group, start, end in zip(groups, ends[:-1], ends[1:]):
        mine = jax.tree.map(lambda x: x[start:end], slots)
        kind = KINDS[group.kind]
        if kind.refined:
            mine = jax.vmap(lambda *pair: refine(*pair, kind.cylinders))(mine, *(x[start:end] for x in shapes))
        found.append(kind.taken(mine))
    return found


def _hull_rows(hulls: Hulls) -> tuple[jax.Array, ...]:
    """The fields of ``hulls`` (:class:`.hull.HullData` order), a row per shape."""
    return tuple(getattr(hulls, field.name) for field in dataclasses.fields(Hulls))


def _hull_pairs(groups: Sequence[PairGroup], culled: list[_Culled], W_H_S, sizes, code, hulls: Hulls) -> list[Slots]:
    """The :class:`.slots.Slots` ``(keep, slots)`` of groups of the family of hulls, in one
    narrow phase: each pair's second shape's hull and its first's (a hull, or made of a box's or a
    cylinder's size) in the second's frame, the first padded to :func:`.hull.first_counts`."""
    a = _joined([kept.first for kept in culled])
    b = _joined([kept.second for kept in culled])
    shape_code = jnp.asarray(code)
    firsts = sorted({group.kind.split("-")[0] for group in groups})
    counts = first_counts([group.kind for group in groups], hulls.counts)
    rows = _hull_rows(hulls)
    own = _hull_rows(hulls.padded(counts)) if HULL in firsts else rows

    def first_hull(size, kind, row):
        # Of the first shapes' kinds of these pairs only: each other kind's hull costs a trace and kernels.
        made = {BOX: lambda: box_hull(size, counts), CYLINDER: lambda: cylinder_hull(size, counts), HULL: lambda: HullData(*row)}
        hull = made[firsts[0]]()
        for shape in firsts[1:]:
            hull = jax.tree.map(lambda old, new: jnp.where(kind == KIND_CODES[shape], new, old), hull, made[shape]())
        return hull

    def pair(H_a, size_a, kind_a, shape_a, H_b, shape_b):  # in b's frame: b's hull as it is, a's moved as far as needed
        # The hulls' rows gathered here, for the pairs of a chunk that runs only.
        a_hull = first_hull(size_a, kind_a, tuple(x[shape_a] for x in own))
        return hull_hull(a_hull, HullData(*(x[shape_b] for x in rows)), spatial.inverse_transform(H_b) @ H_a).placed(H_b)

    real = _joined([kept.real[:, 0] for kept in culled])
    return _per_group(groups, _evaluated(pair, real, W_H_S[a], sizes[a], shape_code[a], jnp.asarray(a), W_H_S[b], jnp.asarray(b)))


def _round_hulls(groups: Sequence[PairGroup], culled: list[_Culled], W_H_S, sizes, hulls: Hulls) -> list[Slots]:
    """The :class:`.slots.Slots` ``(keep, slots)`` of groups of spheres and capsules against hulls, in one narrow phase
    (in each hull's frame)."""
    a = _joined([kept.first for kept in culled])
    b = _joined([kept.second for kept in culled])

    rows = _hull_rows(hulls)

    def pair(H_a, size_a, H_b, shape_b):  # in b's frame: its hull as it is (its row gathered here, as the hulls' pairs do)
        return round_hull(spatial.inverse_transform(H_b) @ H_a, size_a, HullData(*(x[shape_b] for x in rows))).placed(H_b)

    real = _joined([kept.real[:, 0] for kept in culled])
    return _per_group(groups, _evaluated(pair, real, W_H_S[a], sizes[a], W_H_S[b], jnp.asarray(b)))


def _hull_ellipsoids(groups: Sequence[PairGroup], culled: list[_Culled], W_H_S, sizes, hulls: Hulls) -> list[Slots]:
    """The :class:`.slots.Slots` ``(keep, slots)`` of groups of hulls against ellipsoids, in one narrow phase."""
    a = _joined([kept.first for kept in culled])
    b = _joined([kept.second for kept in culled])

    def pair(H_a, row_a, H_b, size_b):
        return hull_ellipsoid(in_world(H_a, HullData(*row_a)), H_b, size_b)

    return _per_group(groups, jax.vmap(pair)(W_H_S[a], tuple(x[a] for x in _hull_rows(hulls)), W_H_S[b], sizes[b]))


def _swept_points(groups: Sequence[PairGroup], culled: list[_Culled], W_H_S, sizes, points, point_radius, code,
                  rims: _PointRims | None = None) -> list[Slots]:
    """The :class:`.slots.Slots` ``(keep, slots)`` of groups of the family of points: each swept
    point (a collidable point, or a sphere's centre and radius) against its shape, all in one
    narrow phase; the points on rings of a cylinder's rim (``rims``; None: none is) first turned
    with their ring towards the shape, each ring of a pair once, along the shape's outward normal
    at the nearest point to the ring's cap centre (:meth:`..rims.Rings.turns`), and inside a box
    pushed out of the face their ring leaves by (:func:`_ring_faces`)."""
    centres, radii, shapes, faces = [], [], [], []
    for group, kept in zip(groups, culled):
        if group.kind == POINTS:
            centre = points[kept.first]
            radii.append(point_radius[kept.first].reshape(-1))
            repeat = np.repeat if isinstance(kept.second, np.ndarray) else jnp.repeat
            shapes.append(repeat(kept.second, POINT_CHUNK))
            if kept.rings is not None:
                centre, own = _turned_chunks(kept, centre, W_H_S, sizes, code, rims)
                faces.append(own)
            elif rims is not None:
                faces.append(_no_faces(centre.reshape(-1, 3)))
            centres.append(centre.reshape(-1, 3))
        else:
            centres.append(W_H_S[kept.first, :3, 3])
            radii.append(sizes[kept.first, 0])
            shapes.append(kept.second)
            if rims is not None:  # a sphere's centre is on no rim
                faces.append(_no_faces(centres[-1]))
    shape = _joined(shapes)
    centre, kinds, H_b, size_b = jnp.concatenate(centres), jnp.asarray(code)[shape], W_H_S[shape], sizes[shape]
    slots = jax.vmap(KINDS[POINTS].kernel)(centre, jnp.concatenate(radii), kinds, H_b, size_b)
    if rims is not None:
        slots = _box_faces(slots, centre, *(jnp.concatenate(parts) for parts in zip(*faces)))
    results, start = [], 0
    for group in groups:
        count = group.keep * KINDS[group.kind].slots
        results.append(jax.tree.map(lambda x: x[start : start + count].reshape((group.keep, -1) + x.shape[2:]), slots))
        start += count
    return results


class _PointRims(NamedTuple):
    """The global points' rings (each point's own row, zeros on no ring): ``placed`` in world
    axes (:class:`..rims.Rings`, ``P`` rows), each point's coordinates on its ring ``at (P, 2)``
    (:meth:`..rims.Rings.at`) and whether it is on a ring ``on_rim (P,)``."""

    placed: Rings
    at: jax.Array
    on_rim: jax.Array


def _turned_chunks(kept: _Culled, centre: jax.Array, W_H_S, sizes, code, rims: _PointRims) -> tuple[jax.Array, tuple]:
    """The ``centre (k, POINT_CHUNK, 3)`` of a group's kept chunks of points turned with their
    rings towards their pair's shape, each ring of a chunk turned once (:attr:`_Culled.rings`),
    and the :func:`_box_faces` inputs of the points ``(k POINT_CHUNK, ...)``."""
    lead, which = kept.rings
    which = jnp.asarray(which)
    ring = jax.tree.map(lambda x: x[lead], rims.placed)  # (k, m, 3)
    H_b, kind_b, size_b = W_H_S[kept.second], jnp.asarray(code)[kept.second], sizes[kept.second]

    def towards(H, kind, size, centres):  # one pair's rings: the shape's outward normal at each cap centre
        _, S_normal = jax.vmap(signed_distance, (0, None, None))(jax.vmap(to_frame, (None, 0))(H, centres), kind, size)
        return S_normal @ H[:3, :3].T

    turns = jnp.take_along_axis(ring.turns(jax.vmap(towards)(H_b, kind_b, size_b, ring.centre)), which[..., None, None], axis=1)
    turned = turned_points(centre, rims.at[kept.first], turns)
    faces = _ring_faces(turned, rims.on_rim[kept.first] & (kind_b == KIND_CODES[BOX])[:, None], which, lead.shape[1], H_b, size_b)
    return turned, tuple(x.reshape((-1,) + x.shape[2:]) for x in faces)


def _ring_faces(points: jax.Array, boxed: jax.Array, which: jax.Array, rings: int, H_b: jax.Array,
                size_b: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Of kept chunks' ``points (k, POINT_CHUNK, 3)`` (world) on rings against boxes where ``boxed
    (k, POINT_CHUNK)`` (the place of each point's ring among the chunk's ``rings``, ``which``), the
    face of its box through which its ring's points inside the box all leave soonest (the most
    any of them lies inside that face, least over the six faces), and each point's depth inside
    that face and the face's outward normal (world), and whether the point is inside its box:
    ``(k, POINT_CHUNK)``, ``(k, POINT_CHUNK, 3)`` and ``(k, POINT_CHUNK)``."""
    q = jnp.einsum("kji,kpj->kpi", H_b[:, :3, :3], points - H_b[:, None, :3, 3])  # box axes
    half = size_b[:, None, :]
    gaps = jnp.concatenate([half - q, half + q], axis=-1)  # inside the +x, +y, +z, -x, -y, -z faces
    inside = boxed & jnp.all(gaps > 0, axis=-1)
    worst = jnp.stack([jnp.max(jnp.where((inside & (which == j))[..., None], gaps, 0.0), axis=1) for j in range(rings)], axis=1)
    face = jnp.take_along_axis(jnp.argmin(worst, axis=-1), which, axis=1)  # (k, POINT_CHUNK)
    depth = jnp.take_along_axis(gaps, face[..., None], axis=-1)[..., 0]
    S_normal = jax.nn.one_hot(face % 3, 3, dtype=points.dtype) * jnp.where(face < 3, 1.0, -1.0).astype(points.dtype)[..., None]
    return depth, jnp.einsum("kij,kpj->kpi", H_b[:, :3, :3], S_normal), inside


def _no_faces(centre: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The :func:`_box_faces` inputs of points ``(n, 3)`` on no ring."""
    return jnp.zeros(centre.shape[:1], centre.dtype), jnp.zeros_like(centre), jnp.zeros(centre.shape[:1], bool)


def _box_faces(slots: Slots, points: jax.Array, depth: jax.Array, normal: jax.Array, inside: jax.Array) -> Slots:
    """``slots (k, 1)`` of points ``(k, 3)`` against their shapes, those of rim points ``inside (k,)``
    a box pushed out of its face ``normal (k, 3)`` (world) through which their ring leaves the box
    soonest, ``depth (k,)`` inside it (:func:`_ring_faces`), where the point alone would leave
    through its nearest face: a ring inside a box the size of its cap (a box tilted on a
    cylinder's cap) lies nearer the box's sides than the face it presses, and the sides' opposite
    pushes left the box to sink onto the cap; a ring that the box's edge cuts into leaves through
    the face nearest to its points, not through the face that its cap's centre faces."""
    depth = jnp.where(inside, depth, slots.depth[:, 0])
    normal = jnp.where(inside[:, None], normal, slots.normal[:, 0])
    position = jnp.where(inside[:, None], points + 0.5 * depth[:, None] * normal, slots.position[:, 0])
    return slots._replace(position=position[:, None], normal=normal[:, None], depth=depth[:, None])


def _radii(group: PairGroup, kept: _Culled, sizes, point_radius, code, rims: "_PointRims | None" = None,
           result: Slots | None = None) -> tuple[jax.Array, jax.Array]:
    """The :attr:`Contacts.radius_a` and :attr:`Contacts.radius_b` ``(keep, slots)`` [m] of a
    group's kept pairs (:attr:`.kinds.Kind.rounded`, with ``sizes (S, 3)``, the points'
    ``point_radius (P,)`` and the shapes' kind ``code (S,)``). A point on a rim (``rims``) turned towards the shape lies on the rim's round edge: its radius is how far its cap's
    centre lies along the contact's normal (the ``result`` of the group's narrow phase), the rim's
    radius for a lying cylinder, zero for a cap flat on the shape."""
    kind = KINDS[group.kind]
    dtype = sizes.dtype
    shape = (group.keep, kind.slots)
    radius = sizes[:, 0]
    if group.kind == POINTS:
        a = point_radius[kept.first]
        if kept.rings is not None:
            # The slot lies half its depth outside the point, along the normal.
            along = spatial.dot(rims.placed.centre[kept.first] - result.position, result.normal) + 0.5 * result.depth
            a = jnp.where(rims.on_rim[kept.first], jnp.maximum(along, 0.0), a)
        shape_kind = jnp.asarray(code)[kept.second]
        b = jnp.where((shape_kind == KIND_CODES[SPHERE]) | (shape_kind == KIND_CODES[CAPSULE]), radius[kept.second], 0.0)
    else:
        a, b = (radius[shapes] if rounded else jnp.zeros(np.shape(shapes), dtype)
                for shapes, rounded in zip((kept.first, kept.second), kind.rounded))
    a, b = jnp.broadcast_to(jnp.reshape(a, (group.keep, -1)), shape), jnp.broadcast_to(jnp.reshape(b, (group.keep, 1)), shape)
    if kind.round_slots is not None:  # the slots past them touch b where it is flat or an edge
        b = jnp.where(np.arange(kind.slots) >= kind.round_slots, 0.0, b)
    return a, b


def _contacts(group: PairGroup, kept: _Culled, result: Slots, start: int, shape_link, point_link, margin,
              radii: tuple[jax.Array, jax.Array]) -> Contacts:
    """The :class:`Contacts` of a group's narrow phase ``result``, its tangential memories from
    ``start``, deeper by their ``margin`` (see :func:`query`), with the ``radii`` of :func:`_radii`."""
    kind = KINDS[group.kind]
    slots = kind.slots
    if group.kind == POINTS:
        link_a = jnp.asarray(point_link)[kept.first].reshape(-1)
    else:
        link_a = jnp.repeat(jnp.asarray(shape_link)[kept.first], slots)
    result = result._replace(valid=result.valid & jnp.reshape(kept.real, result.valid.shape))
    link_b = jnp.repeat(jnp.asarray(shape_link)[kept.second], slots)
    feature = np.arange(slots, dtype=np.int32)[None, :] if result.feature is None else result.feature
    slot = start + (jnp.asarray(kept.slot_kept)[:, None] * group.memory + feature).reshape(-1)
    valid = result.valid.reshape(-1)
    depth = result.depth.reshape(-1)
    if margin is not None and group.explicit:
        depth = depth + jnp.asarray(margin, depth.dtype).at[slot].get(mode="fill", fill_value=0)
    depth = jnp.where(valid, depth, jnp.minimum(depth, 0.0))
    return Contacts(
        link_a=link_a,
        link_b=link_b,
        position=result.position.reshape(-1, 3),
        normal=result.normal.reshape(-1, 3),
        depth=depth,
        active=valid & (depth > 0),
        slot=jnp.asarray(slot, jnp.int32),
        radius_a=radii[0].reshape(-1),
        radius_b=radii[1].reshape(-1),
    )


def _first_bounds(group: PairGroup, first: np.ndarray, real: np.ndarray, W_H_S, points, point_radius, radius,
                  extent) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The bounding spheres (centres ``(K, 3)`` [m], radii ``(K,)``) and the half extents ``(K, 3)``
    [m] of the world-axis boxes about those centres of the first members of the ``group``'s
    candidates: its shapes' (``radius`` and ``extent`` per shape), or those of its chunks of points
    (a chunk's box: its sphere's), each distinct chunk's computed once (a link's chunk meets many
    shapes)."""
    if group.kind != POINTS:
        return W_H_S[first, :3, 3], radius[first], extent[first]
    chunks, which = np.unique(np.where(real, first, -1), axis=0, return_inverse=True)
    mask = chunks >= 0
    chunks = np.where(mask, chunks, chunks[:, :1])
    members = points[chunks]  # (D, slots, 3)
    centre = jnp.sum(jnp.where(mask[..., None], members, 0.0), axis=1) / mask.sum(axis=1, keepdims=True)
    spread = jnp.sqrt(jnp.sum((members - centre[:, None]) ** 2, axis=-1) + 1e-30) + point_radius[chunks]
    which = which.reshape(-1)
    reach = jnp.max(jnp.where(mask, spread, 0.0), axis=1)[which]
    return centre[which], reach, jnp.broadcast_to(reach[:, None], (reach.shape[0], 3))
