"""Tree traversals level by level, unrolled over the depth of the tree.

Links are numbered by depth (see :mod:`.model`), so the links of depth ``l`` are the slice
``levels[l]`` of every per-link array and the concatenation of the levels is the link order.
A traversal handles a whole level at once: parents are read with one static gather from the
level above, children's contributions are summed into their parents with a small static one-hot
mask. The graph grows with the depth of the tree, not with its number of links
(the iCub, 33 links, has 10 levels below its root), and there is no padding and no loop
carried through XLA's while-loop runtime, whose per-iteration cost dominated small models.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .model import Model


def _structure(model: Model) -> tuple[tuple[int, int, Any, np.ndarray | None], ...]:
    """Per level below the root: its ``(start, stop)`` slice, its links' parents in the level above
    (a slice when they are consecutive, else an index array), and the one-hot ``(parents, links)``
    mask that sums links into parents (None when every parent has exactly one child, in order)."""
    return _level_structure(model.parent, model.levels, bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=256)
def _level_structure(parent: tuple[int, ...], levels: tuple[tuple[int, int], ...], x64: bool) -> tuple:
    """Cached per JAX x64 mode (see :func:`.model.topology`)."""
    del x64
    structure = []
    for (above_start, above_stop), (start, stop) in zip(((0, 1),) + levels[:-1], levels):
        local = np.asarray(parent[start:stop]) - above_start
        consecutive = np.array_equal(local, np.arange(local[0], local[0] + len(local)))
        parents = slice(int(local[0]), int(local[0]) + len(local)) if consecutive else local
        one_to_one = consecutive and local[0] == 0 and len(local) == above_stop - above_start
        one_hot = None if one_to_one else np.arange(above_stop - above_start)[:, None] == local[None, :]
        structure.append((start, stop, parents, one_hot))
    return tuple(structure)


def _take(values: Any, index: Any) -> Any:
    """``values[index]`` for every leaf (a slice of the leading axis, or an index array)."""
    if isinstance(index, slice):
        return jax.tree.map(lambda x: jax.lax.slice_in_dim(x, index.start, index.stop, axis=0), values)
    return jax.tree.map(lambda x: x[index], values)


def _sum_into_parents(values: Any, one_hot: np.ndarray | None) -> Any:
    """``sum_j one_hot[i, j] values[j]`` for every leaf, as additions of static slices (one
    elementwise fusion; as a masked reduction, XLA's CPU runtime gives each a slower kernel of its
    own); the values themselves without a mask."""
    if one_hot is None:
        return values
    children = [np.flatnonzero(row) for row in one_hot]

    def sum_one(x):
        rows = [functools.reduce(jnp.add, (x[int(j)] for j in kids)) if len(kids) else jnp.zeros(x.shape[1:], x.dtype) for kids in children]
        return jnp.stack(rows)

    return jax.tree.map(sum_one, values)


def scan_down(
    model: Model, step: Callable[[Any, Any], tuple[Any, Any]], root_values: Any, root_outputs: Any, link_inputs: Any
) -> Any:
    """Root to leaves: ``step(parent_values, level_inputs) -> (level_values, level_outputs)``.

    ``root_values`` and ``root_outputs`` are pytrees of the root's values and outputs ``(1, ...)``;
    ``link_inputs`` a pytree of per-link arrays ``(N, ...)``, sliced per level; ``parent_values``
    hold each link's parent values. Returns the outputs ``(N, ...)`` of all links in link order.
    """
    values, outputs = root_values, [root_outputs]
    for start, stop, parents, _ in _structure(model):
        values, level_outputs = step(_take(values, parents), _take(link_inputs, slice(start, stop)))
        outputs.append(level_outputs)
    return jax.tree.map(lambda *levels: jnp.concatenate(levels), *outputs)


def scan_up(
    model: Model, step: Callable[[Any, Any], tuple[Any, Any]], zeros: Any, root_outputs: Any, link_inputs: Any
) -> tuple[Any, Any]:
    """Leaves to root: ``step(children_sums, level_inputs) -> (level_contributions, level_outputs)``,
    where ``children_sums`` are the contributions the level's children sent up (``zeros`` for the
    deepest level: a pytree of one link's zero values, broadcast to the level).

    Returns the root's ``children_sums (1, ...)`` and the outputs ``(N, ...)`` of all links in
    link order, the root's being ``root_outputs (1, ...)``.
    """
    outputs, sums = [], None
    for start, stop, _, one_hot in reversed(_structure(model)):
        if sums is None:
            sums = jax.tree.map(lambda z, width=stop - start: jnp.broadcast_to(z, (width,) + z.shape), zeros)
        contributions, level_outputs = step(sums, _take(link_inputs, slice(start, stop)))
        sums = _sum_into_parents(contributions, one_hot)
        outputs.append(level_outputs)
    if sums is None:
        sums = jax.tree.map(lambda z: z[None], zeros)
    outputs.append(root_outputs)
    return sums, jax.tree.map(lambda *levels: jnp.concatenate(levels), *reversed(outputs))
