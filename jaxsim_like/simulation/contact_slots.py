"""Contact slots: the collidable points on which each link rests against the terrain.

The implicit step evaluates the contact law and linearises it (3x3 matrices, and the 6x6 link
inertias they add, which dominate its cost) at the ``k_L`` deepest points of each link ``L``
only, the link's *slots*, as MuJoCo keeps at most four contacts of a box on a plane. While at
most ``k_L`` points of a link touch, the step is the same as with every point a slot; beyond
that the shallowest touching points feel no force (the deepest carry the link, and the total
force stays continuous as points trade places, which they do at equal depth). Left explicit,
those points made limp humanoid drops diverge at 5 ms.

:func:`facet_counts` chooses ``k_L`` from the link's geometry: the most of its (swept) points
that reach within a tolerance of one supporting plane of them, i.e. that can rest on flat
ground together (4 for the corners of a box, 8 for a cylinder of two rings of 8 standing on a
cap, every point of a flat plate, 1 for a sphere, 2 for a capsule), at most
:data:`HULL_TERRAIN_SLOTS` for each convex hull (whose vertices are its points). On a plane, a
cylinder's rim rings rest on their squares only (:func:`square_points`, :class:`PlaneSlots`).
"""

from __future__ import annotations

import dataclasses

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.model import Model
from ..dynamics.tree import HULL
from ..parsers.shapes import farthest_points, fibonacci_sphere

HULL_TERRAIN_SLOTS = 4
"""A convex hull rests on the terrain on at most this many of its vertices, spread over the face
it rests on (a box face's 4 corners): its other vertices feel no terrain force while these carry it."""
SPREAD_WINDOW = 0.02
"""A hull's vertices within this fraction of the extent of its vertices (seen along the terrain
normal) above its deepest are candidates of its spread slots (:func:`_spread`): a face tilted by
about a degree still counts as flat."""
_DIRECTIONS = 256
_MOST_CANDIDATES = 24


def _supporting_normals(points: np.ndarray) -> np.ndarray:
    """``(K, 3)`` unit normals of candidate supporting planes of ``points (m, 3)``: the coordinate
    axes, a spread of directions, and the normals of the planes through every three of (at most
    ``_MOST_CANDIDATES``, farthest-point sampled) points."""
    axes = np.concatenate([np.eye(3), -np.eye(3)])
    chosen = points[farthest_points(points, _MOST_CANDIDATES)] if len(points) > _MOST_CANDIDATES else points
    i, j, k = _triples(len(chosen))
    normals = np.cross(chosen[j] - chosen[i], chosen[k] - chosen[i])
    lengths = np.linalg.norm(normals, axis=1)
    normals = normals[lengths > 1e-12] / lengths[lengths > 1e-12, None]
    return np.concatenate([axes, fibonacci_sphere(_DIRECTIONS), normals, -normals])


def _triples(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ``i < j < k`` below ``m``, as three index arrays."""
    grid = np.array(np.meshgrid(np.arange(m), np.arange(m), np.arange(m), indexing="ij")).reshape(3, -1)
    keep = (grid[0] < grid[1]) & (grid[1] < grid[2])
    return grid[0][keep], grid[1][keep], grid[2][keep]


def facet_count(points: np.ndarray, tolerance: float, radii: np.ndarray | None = None) -> int:
    """The most of the balls of ``radii (m,)`` [m] (None: 0) around ``points (m, 3)`` [m] within
    ``tolerance`` [m] of one of their supporting planes (all of them for fewer than four)."""
    if len(points) < 4:
        return len(points)
    radii = np.zeros(len(points)) if radii is None else np.asarray(radii, dtype=float)
    heights = _supporting_normals(points) @ points.T - radii
    return int(np.max(np.sum(heights <= heights.min(axis=1, keepdims=True) + tolerance, axis=1)))


def facet_counts(model: Model, tolerance: float) -> tuple[int, ...]:
    """``k_L`` per link ``(N,)``: :func:`facet_count` of each link's collidable points (0 without),
    at most :data:`HULL_TERRAIN_SLOTS` per convex hull of the link besides its other points."""
    links = np.asarray(model.point_link, dtype=int)
    points, radii = np.asarray(model.collidable_points, dtype=float), np.asarray(model.point_radius, dtype=float)
    hulls, hull_points = _hull_counts(model)
    return tuple(
        min(facet_count(points[links == link], tolerance, radii[links == link]),
            int(np.sum(links == link)) - hull_points[link] + HULL_TERRAIN_SLOTS * hulls[link])
        for link in range(model.number_of_links)
    )


def _hull_links(model: Model) -> tuple[bool, ...]:
    """Per link: whether its shapes are hulls, at least one (static: the model may be traced)."""
    kinds: dict[int, set[str]] = {}
    for link, kind in zip(model.shape_link, model.shape_kind):
        kinds.setdefault(link, set()).add(kind)
    return tuple(kinds.get(link) == {HULL} for link in range(model.number_of_links))


def _hull_counts(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Per link ``(N,)``: its hull shapes and their vertices, which are collidable points of the link
    (:mod:`jaxsim_like.parsers.shapes`; a hull's padding repeats a vertex: the distinct ones count)."""
    hulls, vertices = np.zeros(model.number_of_links, dtype=int), np.zeros(model.number_of_links, dtype=int)
    rows = np.asarray(model.shape_hulls.vertices)
    for s, (link, kind) in enumerate(zip(model.shape_link, model.shape_kind)):
        if kind == HULL:
            hulls[link] += 1
            vertices[link] += len(np.unique(rows[s], axis=0))
    return hulls, vertices


def link_one_hot(point_link: np.ndarray, links: int, dtype) -> jax.Array:
    """``(links, P)``: which link each point is on (``point_link (P,)``)."""
    return jnp.asarray(np.arange(links)[:, None] == np.asarray(point_link)[None, :], dtype=dtype)


class _Group(NamedTuple):
    """Links with the same slot count ``k`` and (padded) point count ``width``: their ``rows``,
    the ``table (R, width)`` of their points (padding repeats a row's first point) and
    ``filled (R, width)``; ``select``: whether the ``k`` deepest are picked (else all ``k = width``);
    ``spread``: whether the first :data:`HULL_TERRAIN_SLOTS` are spread over the face the link
    rests on (links whose shapes are hulls, :func:`_spread`)."""

    rows: np.ndarray
    table: np.ndarray
    filled: np.ndarray
    k: int
    select: bool
    spread: bool = False


@functools.lru_cache(maxsize=64)
def _groups(point_link: tuple[int, ...], counts: tuple[int, ...], hull_links: tuple[bool, ...], x64: bool) -> tuple[_Group, ...]:
    """Cached per JAX x64 mode (see :func:`..dynamics.model.topology`)."""
    del x64
    links = np.asarray(point_link, dtype=int)
    members = {link: np.flatnonzero(links == link) for link in np.unique(links)}
    keys: dict[tuple[int, int, bool, bool], list[int]] = {}
    for link, points in members.items():
        k = min(counts[link], len(points))
        select = k < len(points)
        spread = select and hull_links[link] and k >= HULL_TERRAIN_SLOTS
        keys.setdefault((k, 0 if select else len(points), select, spread), []).append(link)
    groups = []
    for (k, _, select, spread), rows in sorted(keys.items()):
        width = max(len(members[row]) for row in rows)
        table = np.array([np.concatenate([members[r], np.full(width - len(members[r]), members[r][0])]) for r in rows], dtype=int)
        filled = np.arange(width)[None, :] < np.array([len(members[r]) for r in rows])[:, None]
        groups.append(_Group(np.asarray(rows, dtype=int), table, filled, k, select, spread))
    return tuple(groups)


def _spread(position: jax.Array, depth: jax.Array, normal: jax.Array, k: int) -> jax.Array:
    """``k`` of the points ``position (W, 3)`` [m] at ``depth (W,)`` [m] (``-inf``: not a
    candidate), the first :data:`HULL_TERRAIN_SLOTS` spread over the face they rest on: the
    deepest, of those within :data:`SPREAD_WINDOW` of the points' extent above it the farthest
    from it seen along ``normal (3,)``, then the farthest from the line of the two on either side
    (as a box rests on its 4 corners, a polygon on its widest 4), each missing one and the rest the
    deepest of the others. Fixed work; indices ``(k,)``."""
    position, depth = jax.lax.stop_gradient(position), jax.lax.stop_gradient(depth)
    candidate = depth > -jnp.inf
    first = jnp.argmax(depth)
    flat = position - jnp.outer(position @ normal, normal)
    extent = jnp.max(jnp.where(candidate[:, None], jnp.abs(flat - flat[first]), 0.0))
    holds = candidate & (depth >= depth[first] - SPREAD_WINDOW * extent)
    far = jnp.sum((flat - flat[first]) ** 2, axis=-1)
    second = jnp.argmax(jnp.where(holds, far, -1.0))
    side = jnp.cross(flat[second] - flat[first], flat - flat[first]) @ normal
    third = jnp.argmax(jnp.where(holds, jnp.abs(side), -1.0))
    opposite = -jnp.where(side[third] >= 0, 1.0, -1.0) * side
    fourth = jnp.argmax(jnp.where(holds, opposite, -1.0))
    eps = 1e-9 * (extent + 1e-12)
    picks = jnp.stack([first, second, third, fourth])
    found = holds[picks] & jnp.stack(
        [jnp.bool_(True), far[second] > eps**2, jnp.abs(side[third]) > eps * extent, opposite[fourth] > eps * extent])
    found = found & ~jnp.any((picks[:, None] == picks[None, :]) & jnp.tril(jnp.ones((4, 4), bool), -1), axis=1)
    taken = jnp.zeros(depth.shape, bool).at[picks].max(found)
    _, rest = jax.lax.top_k(jnp.where(taken, -jnp.inf, depth), k)
    missing = jnp.cumsum(~found) - 1
    head = jnp.where(found, picks, rest[jnp.maximum(missing, 0)])
    tail = rest[jnp.sum(~found) + jnp.arange(k - HULL_TERRAIN_SLOTS)]
    return jnp.concatenate([head, tail])


@dataclasses.dataclass(frozen=True, eq=False)
class _Layout:
    """The static part of :class:`Slots`: a pytree without leaves, so that slots pass through
    ``vmap`` and ``scan`` (compared by value)."""

    groups: tuple[_Group, ...] | None
    table: np.ndarray | None
    point_link: np.ndarray

    def _key(self) -> tuple:
        def array(x):
            return None if x is None else (x.shape, np.asarray(x).tobytes())

        groups = None if self.groups is None else tuple(
            (array(g.rows), array(g.table), array(g.filled), g.k, g.select) for g in self.groups)
        return groups, array(self.table), array(self.point_link)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


jax.tree_util.register_pytree_node(_Layout, lambda layout: ((), layout), lambda layout, _: layout)


class Slots(NamedTuple):
    """The slot points of a step: ``points (S,)`` indices into the model's ``P`` points (None:
    every point, in order), ``valid (S,)`` False on padding slots (which contribute nothing),
    and the static ``layout`` that sums per-slot values into links: ``groups`` of links with
    consecutive slots (or, when every point is a slot, ``table (N, width)``, the padded points of
    each link), and the link of every point, ``point_link (P,)``."""

    points: jax.Array | None
    valid: jax.Array | None
    layout: _Layout

    @property
    def groups(self) -> tuple[_Group, ...] | None:
        return self.layout.groups

    @property
    def table(self) -> np.ndarray | None:
        return self.layout.table

    @property
    def point_link(self) -> np.ndarray:
        return self.layout.point_link

    def take(self, values: jax.Array) -> jax.Array:
        """``(S, ...)``: per-point ``values (P, ...)`` at the slots (scalars pass through)."""
        values = jnp.asarray(values)
        return values if self.points is None or values.ndim == 0 else values[self.points]

    def mask(self, values: jax.Array) -> jax.Array:
        """``values (S, ...)`` with the padding slots zeroed."""
        if self.valid is None:
            return values
        return jnp.where(self.valid.reshape((-1,) + (1,) * (values.ndim - 1)), values, jnp.zeros((), values.dtype))

    def scatter(self, values: jax.Array, count: int) -> jax.Array:
        """``(count, ...)``: per-slot ``values (S, ...)`` at their points among ``count``, zero elsewhere."""
        if self.points is None:
            return values
        return jnp.zeros((count,) + values.shape[1:], values.dtype).at[self.points].add(self.mask(values))

    def _row_sums(self, values: jax.Array, axis: int = 0) -> list[jax.Array]:
        """Per group, the sums over each of its links' slots of ``values`` (slots along ``axis``)."""
        axis = axis % values.ndim
        sums, start = [], 0
        for group in self.groups:
            size = len(group.rows) * group.k
            rows = jax.lax.slice_in_dim(values, start, start + size, axis=axis)
            sums.append(jnp.sum(rows.reshape(values.shape[:axis] + (len(group.rows), group.k) + values.shape[axis + 1 :]), axis=axis + 1))
            start += size
        return sums

    def link_totals(self, values: jax.Array) -> jax.Array:
        """``(S,)``: for each slot, the sum of per-slot ``values (S,)`` over its link's slots."""
        if self.table is not None:
            one_hot = link_one_hot(self.point_link, self.table.shape[0], values.dtype)
            return (one_hot @ values) @ one_hot
        return jnp.concatenate(
            [jnp.repeat(total, group.k) for total, group in zip(self._row_sums(values), self.groups)]
        )

    def link_sums(self, values: jax.Array, links: int, axis: int = 0) -> jax.Array:
        """``(links, ...)``: per-slot ``values (S, ...)`` summed into their links; with ``axis``, the
        slots along it and the links in their place (``-1``: components first, so that a batched
        step's kernels run along the slots, not along 3 or 6 components)."""
        axis = axis % values.ndim
        if self.table is not None:
            zero = jnp.zeros(values.shape[:axis] + (1,) + values.shape[axis + 1 :], values.dtype)
            padded = jnp.concatenate([values, zero], axis=axis)
            return jnp.sum(padded[(slice(None),) * axis + (self.table,)], axis=axis + 1)
        return _in_link_order(self._row_sums(values, axis), self.groups, links, axis)


def _in_link_order(totals: list[jax.Array], groups: tuple[_Group, ...], links: int, axis: int) -> jax.Array:
    """The groups' per-link ``totals`` (along ``axis``, in the order of each group's rows) as one
    array of ``links`` along ``axis``, zero for links without slots: one concatenation of static
    slices, each a run of consecutive links of one group (a scatter into zeros is a loop on the CPU)."""
    source = [(-1, 0)] * links
    for g, group in enumerate(groups):
        for position, row in enumerate(group.rows):
            source[row] = (g, position)
    pieces, link = [], 0
    while link < links:
        g, start = source[link]
        stop = link + 1
        while stop < links and source[stop][0] == g and (g < 0 or source[stop][1] == start + stop - link):
            stop += 1
        if g < 0:
            shape = list(totals[0].shape)
            shape[axis] = stop - link
            pieces.append(jnp.zeros(shape, totals[0].dtype))
        else:
            pieces.append(jax.lax.slice_in_dim(totals[g], start, start + stop - link, axis=axis))
        link = stop
    return jnp.concatenate(pieces, axis=axis)


def _padded_sum_table(model: Model) -> np.ndarray:
    """``(N, width)``: the points of each link, padded with ``P`` (an appended zero row)."""
    links = np.asarray(model.point_link, dtype=int)
    counts = np.bincount(links, minlength=model.number_of_links)
    width = max(int(counts.max(initial=0)), 1)
    order = np.argsort(links, kind="stable")
    grouped = links[order]
    table = np.full((model.number_of_links, width), len(links))
    table[grouped, np.arange(len(links)) - np.searchsorted(grouped, grouped)] = order
    return table


def every_point(model: Model) -> Slots:
    """Every point a slot."""
    return Slots(None, None, _Layout(None, _padded_sum_table(model), np.asarray(model.point_link, dtype=int)))


def contact_slots(
    model: Model,
    depth: jax.Array,
    enabled: jax.Array,
    counts: tuple[int, ...] | None,
    limit: jax.Array | None = None,
    positions: jax.Array | None = None,
    normal: jax.Array | None = None,
) -> Slots:
    """The :class:`Slots` of a step: per link ``L``, the ``counts[L]`` deepest of its enabled
    points at ``depth (P,)`` [m] (``enabled (P,)``); every point when ``counts`` is None. On a
    link whose shapes are hulls, given the points' ``positions (P, 3)`` [m] and terrain ``normal
    (P, 3)``, the first 4 slots are spread over the face it rests on instead (:func:`_spread`). A
    ``limit (N,)`` (int, traced) leaves only the first ``limit[L]`` of them valid (a padded
    model's own slot counts, :mod:`.groups`)."""
    if counts is None:
        return every_point(model)
    points, valid = [], []
    hull_links = _hull_links(model) if positions is not None else (False,) * len(counts)
    groups = _groups(tuple(model.point_link), tuple(counts), hull_links, bool(jax.config.jax_enable_x64))
    for group in groups:
        table, filled = jnp.asarray(group.table), jnp.asarray(group.filled)
        if group.select or limit is not None:
            scores = jnp.where(group.filled & enabled[group.table], depth[group.table], -jnp.inf)
            if group.spread:
                pick = jax.vmap(functools.partial(_spread, k=group.k))(positions[group.table], scores, normal[group.table[:, 0]])
            else:
                _, pick = jax.lax.top_k(scores, group.k)
            table, filled = jnp.take_along_axis(table, pick, axis=1), jnp.take_along_axis(filled, pick, axis=1)
        if limit is not None:
            filled = filled & (np.arange(group.k)[None, :] < limit[group.rows][:, None])
        points.append(table.reshape(-1))
        valid.append(filled.reshape(-1))
    return Slots(jnp.concatenate(points), jnp.concatenate(valid), _Layout(groups, None, np.asarray(model.point_link, dtype=int)))


def square_points(model: Model) -> np.ndarray | None:
    """``(P,)`` bool: the points that may rest a link on a plane, False for the points of a ring
    of cylinder rim points (:mod:`.rims`) that has one point at each quarter turn from its first
    and lie elsewhere on it; None when no ring has such a square.

    A ring turned towards a plane has its first point at the rim's deepest (exact whatever the
    roll or tilt): the square of its points a quarter turn apart rests a lying, tilted or standing
    cylinder as the whole ring does (a cap flat on the plane on the square, as MuJoCo rests a
    cylinder on a plane on at most 4 contacts), at half the slots. Every ring point still meets
    other bodies and the terrain's boxes and height functions, whose surfaces the ring is not
    turned to."""
    if model.ring_rim is None:
        return None
    point_ring, ring_rim = np.asarray(model.point_ring, dtype=int), np.asarray(model.ring_rim, dtype=float)
    offset = np.asarray(model.collidable_points, dtype=float) - ring_rim[point_ring, :3]
    axis, phase = ring_rim[point_ring, 3:6], ring_rim[point_ring, 6:9]
    angle = np.arctan2(np.sum(offset * np.cross(axis, phase), axis=1), np.sum(offset * phase, axis=1))
    quarter = np.abs(np.remainder(angle / (0.5 * np.pi) + 0.5, 1.0) - 0.5) < 1e-6
    keep = np.ones(len(point_ring), bool)
    for ring in np.unique(point_ring[point_ring > 0]):
        members = point_ring == ring
        if np.sum(members & quarter) == 4:
            keep[members & ~quarter] = False
    return None if keep.all() else keep


class PlaneSlots(NamedTuple):
    """A model's slots on a plane (static): the slot ``counts`` per link, the points that are not
    slot candidates there, ``aside`` (indices, sorted: :func:`square_points`), and the counts
    ``off`` the plane they were reduced from (a step whose counts differ does not use them)."""

    counts: tuple[int, ...]
    aside: tuple[int, ...]
    off: tuple[int, ...]

    def candidates(self, points: int) -> np.ndarray:
        """``(points,)`` bool: which points may be slots on a plane."""
        keep = np.ones(points, bool)
        keep[list(self.aside)] = False
        return keep


def plane_slots(model: Model, counts: tuple[int, ...] | None, tolerance: float) -> PlaneSlots | None:
    """The :class:`PlaneSlots` of a concrete ``model`` whose links rest on ``counts`` slots: each
    link that has points outside :func:`square_points` at :func:`facet_count` of its other points
    within ``tolerance`` [m] (at most its count); None when ``counts`` is or no ring has a square."""
    keep = square_points(model)
    if counts is None or keep is None:
        return None
    links = np.asarray(model.point_link, dtype=int)
    points, radii = np.asarray(model.collidable_points, dtype=float), np.asarray(model.point_radius, dtype=float)
    reduced = tuple(
        min(count, facet_count(points[(links == link) & keep], tolerance, radii[(links == link) & keep]))
        if np.any((links == link) & ~keep) else count
        for link, count in enumerate(counts)
    )
    return PlaneSlots(reduced, tuple(int(i) for i in np.flatnonzero(~keep)), tuple(counts))
