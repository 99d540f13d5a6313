"""Models of one structure batched together: the world step traces each structure once.

The models of a world that share their structure (topology, joint types, points and shapes,
differing only in names and traced values), their parameters' and inputs' structure fall into one
:class:`ModelGroup`; the step stacks their pytrees along a leading axis and ``vmap``s the
per-model stages over it, so that its compiled program does not grow with the number of
identical bodies. Models that differ only in their collidable points (their number per link,
places and radii; a box's 8 corners, a sphere's 1 swept point), in the kinds of their shapes and
in their hulls share a group too, as *kinds* of it: their points are padded per link to the most
any member has, the padding switched off (``present``), their hulls to the most vertices, faces
and edges, and each link rests on at most its own number of contact slots (``slot_limit``), so
that every member steps as it would alone. Per-link
(per-shape, per-point) values of every group meet in the global order of the collision table
(``link_offsets[m] + l``) through static gathers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.hulls import Hulls
from ..dynamics.model import Model
from ..host import to_device
from ..parsers.shapes import RIM_COLUMNS
from ..dynamics.state import State
from .params import ModelParams
from .model_step import StepOutput

_NAMES = ("name", "link_names", "joint_names", "frame_names", "point_source", "shape_source", "semantics", "point_collision",
          "shape_collision")
"""The static fields of a model that name things and never enter the arithmetic."""

COLOURS = 2
"""Members of a group alternate between this many colours: a Gauss-Seidel sweep solves one
colour of a group at a time with the latest velocities of the other (a stack ordered bottom-up
is then solved red-black)."""


@dataclasses.dataclass(frozen=True)
class ModelGroup:
    """The models ``members`` (world indices, ascending) of one structure; ``links (G, N)``,
    ``shapes (G, S)`` and ``points (G, P)``: the global index of each member's links, shapes and
    collidable points (``-1``: padding); ``colour (G,)``: each member's colour within its kind (all
    0 for a kind of one); ``kind (G,)``: each member's kind (its structure before padding, ``kinds``
    of them, in order of first member). Padded (more than one kind): ``own (G, P)``, the index of
    each point among its member's own (``-1``: padding), the group's ``point_link (P,)`` and static
    ``contact_slots`` per link, and each member's ``slot_limit (G, N)``; ``rings``: the most rings of
    points on cylinder rims of a member (:attr:`~..dynamics.model.Model.ring_rim`, ring 0 counted;
    0: no member has any), to which every member's rings are padded (zero rows, none used);
    ``hull_counts``: the most ``(V, F, K, E)`` of a member's hulls, to which every member's
    :attr:`~..dynamics.model.Model.shape_hulls` are padded (zero rows for shapes that are not
    hulls)."""

    members: tuple[int, ...]
    links: np.ndarray
    shapes: np.ndarray
    points: np.ndarray
    colour: np.ndarray
    kind: np.ndarray
    kinds: int = 1
    own: np.ndarray | None = None
    point_link: tuple[int, ...] | None = None
    contact_slots: tuple[int, ...] | None = None
    slot_limit: np.ndarray | None = None
    rings: int = 0
    hull_counts: tuple[int, int, int, int] = (0, 0, 0, 0)

    @property
    def padded(self) -> bool:
        """Whether the members are kinds of one padded structure."""
        return self.kinds > 1


_SURFACES = ("point_friction", "point_margin", "point_torsion", "point_rolling", "point_ellipsoid")  # a model's optional per-point fields


def template(model: Model, first: Model) -> Model:
    """``model`` carrying the names of ``first``: the pytree structure it shares with the models of
    its group."""
    return dataclasses.replace(model, **{name: getattr(first, name) for name in _NAMES})


def _signature(tree: Any) -> tuple:
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((np.shape(x), jnp.result_type(x)) for x in leaves)


def _pointless(value: Any) -> Any:
    """``value`` without what depends on its model's collidable points, shape kinds and hulls (a
    model, its parameters or its state; anything else as is): the structure that kinds of a padded
    group share."""
    if isinstance(value, Model):
        def empty(name: str, *shape: int) -> jax.Array | None:  # in the field's own dtype
            field = getattr(value, name)
            return None if field is None else jnp.zeros((0, *shape), jnp.result_type(field))

        return dataclasses.replace(value, collidable_points=empty("collidable_points", 3), point_radius=empty("point_radius"),
                                   point_terrain=empty("point_terrain"), point_link=(),
                                   **{name: empty(name) for name in _SURFACES},
                                   point_source=(), point_collision=(), shape_kind=("",) * len(value.shape_kind), ring_rim=None, ring_link=None,
                                   point_ring=None, shape_hulls=Hulls.of([None] * len(value.shape_kind), jnp.result_type(value.shape_hulls.vertices)))
    if isinstance(value, ModelParams):
        return dataclasses.replace(value, contact_slots=None, plane_slots=None)
    if isinstance(value, State):
        return value.replace(contact_deformation=jnp.zeros((0, 3), value.contact_deformation.dtype))
    return value


def group_models(models: Sequence[Model], trees: Sequence[Sequence[Any]], flags: Sequence[Hashable]) -> tuple[ModelGroup, ...]:
    """The groups of ``models`` whose structure, ``trees`` (sequences of pytrees, one entry per
    model each; the first, the models' :class:`.params.ModelParams`) and ``flags`` (one hashable
    per model) agree, but for the collidable points and shape kinds of models whose flag is
    falsy, in order of their first member."""
    params = trees[0]
    keys: dict[tuple, list[int]] = {}
    for m, model in enumerate(models):
        loose = not flags[m]
        values = [_pointless(v[m]) if loose else v[m] for v in trees]
        anonymous = template(_pointless(model) if loose else model, models[0])
        key = (loose, _signature(anonymous), flags[m], *(_signature(v) for v in values))
        keys.setdefault(key, []).append(m)
    return groups_of(models, params, tuple(tuple(members) for members in keys.values()))


def groups_of(models: Sequence[Model], params: Sequence[ModelParams], members: Sequence[tuple[int, ...]]) -> tuple[ModelGroup, ...]:
    """The :class:`ModelGroup` of each tuple of ``members`` (world indices, ascending) of ``models``
    with their ``params``; the members' kinds are their structures (and contact slots)."""
    offsets = [np.cumsum([0] + [count(m) for m in models]) for count in
               (lambda m: m.number_of_links, lambda m: len(m.shape_kind), lambda m: len(m.point_link))]

    def indices(offset: np.ndarray, members: tuple[int, ...]) -> np.ndarray:
        return np.stack([np.arange(offset[m], offset[m + 1]) for m in members]).astype(np.int32)

    def colours(count: int) -> np.ndarray:
        return np.arange(count) % COLOURS if count > 1 else np.zeros(count, int)

    groups = []
    for group in members:
        kinds: dict[tuple, int] = {}
        kind = np.array([kinds.setdefault((_signature(template(models[m], models[group[0]])), params[m].contact_slots), len(kinds))
                         for m in group])
        base = dict(members=tuple(group), links=indices(offsets[0], group), shapes=indices(offsets[1], group))
        if len(kinds) == 1:
            groups.append(ModelGroup(**base, points=indices(offsets[2], group), colour=colours(len(group)), kind=kind))
            continue
        colour = np.zeros(len(group), int)
        for k in range(len(kinds)):
            colour[kind == k] = colours(int(np.sum(kind == k)))
        point_link, own, limit, slots = _padding([models[m] for m in group], [params[m].contact_slots for m in group])
        points = np.where(own >= 0, own + np.asarray([offsets[2][m] for m in group])[:, None], -1).astype(np.int32)
        groups.append(ModelGroup(**base, points=points, colour=colour, own=own, kind=kind, kinds=len(kinds),
                                 point_link=point_link, contact_slots=slots, slot_limit=limit,
                                 rings=max(0 if models[m].ring_rim is None else len(models[m].ring_rim) for m in group),
                                 hull_counts=tuple(int(c) for c in np.max([models[m].shape_hulls.counts for m in group], axis=0))))
    return tuple(groups)


def _padding(models: Sequence[Model], counts: Sequence[tuple[int, ...] | None]) -> tuple[tuple[int, ...], np.ndarray, np.ndarray, tuple[int, ...]]:
    """The padded points of ``models`` (one link structure) with their contact slot ``counts`` per
    link (None: every point): the ``point_link (P,)`` of the padded points (per link, in link order,
    the most points any model has there), each model's point at each place ``(G, P)`` (its points
    of the link in their order, then ``-1``), the slots of each model per link ``(G, N)`` and the
    group's slots per link (the most of any model)."""
    links = models[0].number_of_links
    per_link = [[np.flatnonzero(np.asarray(m.point_link, dtype=int) == link) for link in range(links)] for m in models]
    width = [max(len(p[link]) for p in per_link) for link in range(links)]
    point_link = tuple(link for link in range(links) for _ in range(width[link]))
    own = np.stack([np.concatenate([np.pad(p[link], (0, width[link] - len(p[link])), constant_values=-1) for link in range(links)])
                    for p in per_link]).astype(np.int32).reshape(len(models), len(point_link))
    limit = np.array([[len(p[link]) if c is None else min(c[link], len(p[link])) for link in range(links)]
                      for p, c in zip(per_link, counts)], dtype=np.int32)
    return point_link, own, limit, tuple(int(k) for k in limit.max(axis=0))


def _padded(group: ModelGroup, i: int, value: Any) -> Any:
    """Member ``i``'s ``value`` (its model, parameters or state; anything else as is) with the
    group's padded points: a padding point sits at its link's origin with radius 0 and no
    tangential deformation; the parameters take the group's contact slots."""
    if not group.padded:
        return value
    own = group.own[i]

    def take(values: jax.Array) -> jax.Array:
        index = np.where(own >= 0, own, len(values))
        if isinstance(values, jax.core.Tracer):
            return jnp.concatenate([values, jnp.zeros((1,) + values.shape[1:], values.dtype)])[index]
        values = np.asarray(values)  # concrete: in numpy (each eager jax operation compiles a small program)
        return to_device(np.concatenate([values, np.zeros((1,) + values.shape[1:], values.dtype)])[index])

    with jax.ensure_compile_time_eval():
        if isinstance(value, Model):
            return dataclasses.replace(
                value, collidable_points=take(value.collidable_points), point_radius=take(value.point_radius),
                **_padded_rings(group, value, take),
                point_terrain=take(value.point_terrain),
                **{name: None if getattr(value, name) is None else take(getattr(value, name)) for name in _SURFACES},
                point_link=group.point_link, point_source=tuple(value.point_source[p] if p >= 0 else "" for p in own),
                point_collision=tuple(value.point_collision[p] if p >= 0 else "" for p in own),
                shape_kind=("",) * len(value.shape_kind), shape_hulls=value.shape_hulls.padded(group.hull_counts))
        if isinstance(value, ModelParams):
            return dataclasses.replace(value, contact_slots=group.contact_slots, plane_slots=None)
        if isinstance(value, State):
            return value.replace(contact_deformation=take(value.contact_deformation))
    return value


def _padded_rings(group: ModelGroup, model: Model, take) -> dict[str, Any]:
    """The ring fields of ``model``, a member of the padded ``group``: its rings padded to the
    group's (zero rows, link 0), its points' rings taken as its points are (``take``; a padding
    point on ring 0); a member without rings has ring 0 alone, padded (nothing where no member
    has rings)."""
    if not group.rings:
        return {}
    dtype = jnp.result_type(model.point_radius)
    if model.ring_rim is None:
        ring_rim, ring_link, point_ring = np.zeros((1, RIM_COLUMNS), dtype), np.zeros(1, np.int32), np.zeros(len(model.point_link), np.int32)
    else:
        ring_rim, ring_link, point_ring = model.ring_rim, model.ring_link, model.point_ring
    extra = group.rings - len(ring_rim)

    def pad(values: Any) -> jax.Array:
        if isinstance(values, jax.core.Tracer):
            return jnp.concatenate([values, jnp.zeros((extra,) + values.shape[1:], values.dtype)])
        values = np.asarray(values)
        return to_device(np.concatenate([values, np.zeros((extra,) + values.shape[1:], values.dtype)]))

    return dict(ring_rim=pad(ring_rim), ring_link=pad(ring_link), point_ring=take(point_ring))


def _unpadded(group: ModelGroup, i: int, value: Any, axis: int) -> Any:
    """Member ``i``'s ``value`` (its state, or a step's :class:`.step.StepOutput` with its points
    along ``axis``; anything else as is) without the group's padding points."""
    if not group.padded:
        return value
    own = np.flatnonzero(group.own[i] >= 0)
    if isinstance(value, State):
        return value.replace(contact_deformation=value.contact_deformation[own])
    if isinstance(value, StepOutput):
        return value._replace(**{name: jnp.take(getattr(value, name), own, axis=axis) for name in _POINT_OUTPUTS})
    return value


_POINT_OUTPUTS = ("contact_positions", "contact_normals", "penetration", "contact_forces", "contact_torques", "in_contact")


def stack(group: ModelGroup, values: Sequence[Any]) -> Any:
    """The pytrees ``values`` (one per model of the world) of the group's members, padded and stacked."""
    return jax.tree.map(_stacked, *[_padded(group, i, values[m]) for i, m in enumerate(group.members)])


def _stacked(*leaves: Any) -> jax.Array:
    # Concrete leaves (a world closed over by a jitted function) are stacked now: one constant in
    # the traced program instead of an operation per member to compile; arrays in numpy (an eager
    # jax.numpy stack compiles a small program per shape and count).
    if any(isinstance(x, jax.core.Tracer) for x in leaves):
        return jnp.stack(leaves)
    if all(isinstance(x, (np.ndarray, jax.Array)) and not getattr(x, "weak_type", False) for x in leaves):
        return jnp.asarray(np.stack([np.asarray(x) for x in leaves]), jnp.result_type(*leaves))
    with jax.ensure_compile_time_eval():
        return jnp.stack(leaves)


def stack_models(group: ModelGroup, models: Sequence[Model]) -> Model:
    """The group's models padded and stacked, named as its first member."""
    members = [_padded(group, i, models[m]) for i, m in enumerate(group.members)]
    return jax.tree.map(_stacked, *[template(m, members[0]) for m in members])


def unstack(groups: Sequence[ModelGroup], stacked: Sequence[Any], count: int, axis: int = 0) -> list[Any]:
    """Per model of the world (``count``), its slice of the ``stacked`` pytree of its group
    (stacked along ``axis``), without padding points."""
    result: list[Any] = [None] * count
    for group, tree in zip(groups, stacked):
        leaves, treedef = jax.tree.flatten(tree)
        # One static slice per member and leaf (a gather per slice would cost far more to compile).
        parts = [[jax.lax.index_in_dim(x, i, axis, keepdims=False) for i in range(len(group.members))] for x in leaves]
        for i, m in enumerate(group.members):
            result[m] = _unpadded(group, i, jax.tree.unflatten(treedef, [part[i] for part in parts]), axis)
    return result


def to_global(groups: Sequence[ModelGroup], field: str, stacked: Sequence[jax.Array]) -> jax.Array:
    """``(L, ...)``: the per-``field`` (``links``, ``shapes`` or ``points``) values
    ``stacked[g] (G, N, ...)`` of every group, in the global order (padding points left out)."""
    order = np.concatenate([getattr(g, field).reshape(-1) for g in groups])
    flat = jnp.concatenate([v.reshape((-1,) + v.shape[2:]) for v in stacked])
    real = np.flatnonzero(order >= 0)
    place = real[np.argsort(order[real])]
    return flat if np.array_equal(place, np.arange(order.size)) else flat[place]


def from_global(group: ModelGroup, field: str, values: jax.Array) -> jax.Array:
    """``(G, N, ...)``: the group's members' rows of the global ``values (L, ...)``."""
    return values[getattr(group, field)]
