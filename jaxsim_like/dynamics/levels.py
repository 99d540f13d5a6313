"""Tree traversals as a ``lax.scan`` over depth levels laid out on a padded grid.

Links of depth ``l`` form row ``l`` of a ``(L + 1, W)`` grid (see :class:`~.model.Topology`).
A step of the scan handles a whole row at once; parents are reached through a small static
one-hot matrix instead of gathers or scatters, so the graph has the same size for any number of
links and batches into plain matrix products under ``vmap``.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .model import Model, topology


def to_grid(model: Model, link_values: jax.Array, fill: Any) -> jax.Array:
    """``(L + 1, W, ...)`` grid of per-link values ``(N, ...)``; padding slots get ``fill``."""
    grid = topology(model.parent, model.joint_link).grid
    padding = jnp.broadcast_to(jnp.asarray(fill, link_values.dtype), (1,) + link_values.shape[1:])
    return jnp.concatenate([link_values, padding])[grid]


def from_grid(model: Model, grid_values: jax.Array) -> jax.Array:
    """Per-link values ``(N, ...)`` of a grid ``(L + 1, W, ...)``."""
    position = topology(model.parent, model.joint_link).grid_position
    return grid_values.reshape((-1,) + grid_values.shape[2:])[position]


def valid_slots(model: Model) -> np.ndarray:
    """``(L + 1, W)`` mask of the grid slots that hold a link."""
    return topology(model.parent, model.joint_link).grid < model.number_of_links


def gather_parents(selector: jax.Array, parent_row: jax.Array) -> jax.Array:
    """Each slot's parent value ``(W, ...)`` from the row above ``(W, ...)``."""
    return jnp.tensordot(selector, parent_row, axes=1)


def scatter_to_parents(selector: jax.Array, child_row: jax.Array) -> jax.Array:
    """Sums of children's values ``(W, ...)`` per slot of the row above."""
    return jnp.tensordot(selector.T, child_row, axes=1)


def scan_down(model: Model, step: Callable[[Any, Any], tuple[Any, Any]], root_row: Any, rows: Any):
    """Root to leaves: ``step(parents_row, row_inputs) -> (row, row_outputs)`` for rows 1..L.

    ``root_row`` and ``row`` are pytrees of ``(W, ...)`` arrays; ``parents_row`` holds each
    slot's parent values. Returns the stacked ``row_outputs``.
    """
    selector = jnp.asarray(topology(model.parent, model.joint_link).parent_selector)

    def body(previous, inputs):
        select, row_inputs = inputs
        parents = jax.tree.map(lambda value: gather_parents(select.astype(value.dtype), value), previous)
        return step(parents, row_inputs)

    _, outputs = jax.lax.scan(body, root_row, (selector, rows))
    return outputs


def scan_up(model: Model, step: Callable[[Any, Any], tuple[Any, Any]], leaves_carry: Any, rows: Any):
    """Leaves to root: ``step(children_sums, row_inputs) -> (row_contributions, row_outputs)`` for
    rows L..1, where ``children_sums`` are the contributions the row's children sent up.

    Returns the sums sent to the root row and the ``row_outputs`` stacked in row order 1..L.
    """
    selector = jnp.asarray(topology(model.parent, model.joint_link).parent_selector)

    def body(children_sums, inputs):
        select, row_inputs = inputs
        contributions, outputs = step(children_sums, row_inputs)
        return jax.tree.map(lambda c: scatter_to_parents(select.astype(c.dtype), c), contributions), outputs

    reversed_rows = jax.tree.map(lambda x: x[::-1], (selector, rows))
    root_sums, outputs = jax.lax.scan(body, leaves_carry, reversed_rows)
    return root_sums, jax.tree.map(lambda x: x[::-1], outputs)
