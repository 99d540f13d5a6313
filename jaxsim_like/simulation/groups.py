"""Models of one structure batched together: the world step traces each structure once.

The models of a world that share their structure (topology, joint types, points and shapes,
differing only in names and traced values), their parameters' and inputs' structure fall into one
:class:`ModelGroup`; the step stacks their pytrees along a leading axis and ``vmap``s the
per-model stages over it, so that its compiled program does not grow with the number of
identical bodies. Per-link (per-shape, per-point) values of every group meet in the global
order of the collision table (``link_offsets[m] + l``) through static gathers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.model import Model

_NAMES = ("name", "link_names", "joint_names", "frame_names", "point_source", "shape_source", "semantics")
"""The static fields of a model that name things and never enter the arithmetic."""

COLOURS = 2
"""Members of a group alternate between this many colours: a Gauss-Seidel sweep solves one
colour of a group at a time with the latest velocities of the other (a stack ordered bottom-up
is then solved red-black)."""


@dataclasses.dataclass(frozen=True)
class ModelGroup:
    """The models ``members`` (world indices, ascending) of one structure; ``links (G, N)``,
    ``shapes (G, S)`` and ``points (G, P)``: the global index of each member's links, shapes and
    collidable points; ``colour (G,)``: each member's colour (all 0 for a group of one)."""

    members: tuple[int, ...]
    links: np.ndarray
    shapes: np.ndarray
    points: np.ndarray
    colour: np.ndarray


def template(model: Model, first: Model) -> Model:
    """``model`` carrying the names of ``first``: the pytree structure it shares with the models of
    its group."""
    return dataclasses.replace(model, **{name: getattr(first, name) for name in _NAMES})


def _signature(tree: Any) -> tuple:
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((np.shape(x), jnp.result_type(x)) for x in leaves)


def group_models(models: Sequence[Model], trees: Sequence[Sequence[Any]], flags: Sequence[Hashable]) -> tuple[ModelGroup, ...]:
    """The groups of ``models`` whose structure, ``trees`` (sequences of pytrees, one entry per
    model each) and ``flags`` (one hashable per model) agree, in order of their first member."""
    keys: dict[tuple, list[int]] = {}
    for m, model in enumerate(models):
        anonymous = template(model, models[0])
        key = (_signature(anonymous), flags[m], *(_signature(values[m]) for values in trees))
        keys.setdefault(key, []).append(m)
    return groups_of(models, tuple(tuple(members) for members in keys.values()))


def groups_of(models: Sequence[Model], members: Sequence[tuple[int, ...]]) -> tuple[ModelGroup, ...]:
    """The :class:`ModelGroup` of each tuple of ``members`` (world indices, ascending) of ``models``."""
    offsets = [np.cumsum([0] + [count(m) for m in models]) for count in
               (lambda m: m.number_of_links, lambda m: len(m.shape_kind), lambda m: len(m.point_link))]

    def indices(offset: np.ndarray, members: tuple[int, ...]) -> np.ndarray:
        return np.stack([np.arange(offset[m], offset[m + 1]) for m in members]).astype(np.int32)

    return tuple(
        ModelGroup(
            members=tuple(group),
            links=indices(offsets[0], group),
            shapes=indices(offsets[1], group),
            points=indices(offsets[2], group),
            colour=np.arange(len(group)) % COLOURS if len(group) > 1 else np.zeros(1, int),
        )
        for group in members
    )


def stack(group: ModelGroup, values: Sequence[Any]) -> Any:
    """The pytrees ``values`` (one per model of the world) of the group's members, stacked."""
    return jax.tree.map(_stacked, *[values[m] for m in group.members])


def _stacked(*leaves: Any) -> jax.Array:
    # Concrete leaves (a world closed over by a jitted function) are stacked now: one constant in
    # the traced program instead of an operation per member to compile.
    if any(isinstance(x, jax.core.Tracer) for x in leaves):
        return jnp.stack(leaves)
    with jax.ensure_compile_time_eval():
        return jnp.stack(leaves)


def stack_models(group: ModelGroup, models: Sequence[Model]) -> Model:
    """The group's models stacked, named as its first member."""
    first = models[group.members[0]]
    return stack(group, [template(m, first) for m in models])


def unstack(groups: Sequence[ModelGroup], stacked: Sequence[Any], count: int, axis: int = 0) -> list[Any]:
    """Per model of the world (``count``), its slice of the ``stacked`` pytree of its group
    (stacked along ``axis``)."""
    result: list[Any] = [None] * count
    for group, tree in zip(groups, stacked):
        leaves, treedef = jax.tree.flatten(tree)
        # One static slice per member and leaf (a gather per slice would cost far more to compile).
        parts = [[jax.lax.index_in_dim(x, i, axis, keepdims=False) for i in range(len(group.members))] for x in leaves]
        for i, m in enumerate(group.members):
            result[m] = jax.tree.unflatten(treedef, [part[i] for part in parts])
    return result


def to_global(groups: Sequence[ModelGroup], field: str, stacked: Sequence[jax.Array]) -> jax.Array:
    """``(L, ...)``: the per-``field`` (``links``, ``shapes`` or ``points``) values
    ``stacked[g] (G, N, ...)`` of every group, in the global order."""
    order = np.concatenate([getattr(g, field).reshape(-1) for g in groups])
    flat = jnp.concatenate([v.reshape((-1,) + v.shape[2:]) for v in stacked])
    return flat[np.argsort(order)] if not np.array_equal(order, np.arange(order.size)) else flat


def from_global(group: ModelGroup, field: str, values: jax.Array) -> jax.Array:
    """``(G, N, ...)``: the group's members' rows of the global ``values (L, ...)``."""
    return values[getattr(group, field)]
