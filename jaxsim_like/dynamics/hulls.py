"""The convex hulls of a model's mesh shapes, one row per shape, padded to common counts.

Rows of shapes that are not hulls hold zeros. Padding repeats a hull's first vertex, plane, face
and edge (a face's polygon repeats its last corner), so that a padded hull is the same set.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.hulls import Hull
from ..pytree import pytree_dataclass


@pytree_dataclass()
class Hulls:
    """Per shape, in its frame (:class:`~jaxsim_like.parsers.hulls.Hull`): ``vertices (S, V, 3)``
    [m], ``planes (S, F, 4)`` (outward unit normal, offset [m]), ``faces (S, F, K, 3)`` [m],
    ``edges (S, E, 2, 3)`` [m] and ``edge_normals (S, E, 2, 3)``; all counts 0 in a model without
    hulls."""

    vertices: jax.Array
    planes: jax.Array
    faces: jax.Array
    edges: jax.Array
    edge_normals: jax.Array

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """``(V, F, K, E)``."""
        return self.vertices.shape[-2], self.planes.shape[-2], self.faces.shape[-2], self.edges.shape[-3]

    @staticmethod
    def of(hulls: Sequence[Hull | None], dtype: Any, counts: tuple[int, int, int, int] | None = None) -> "Hulls":
        """The rows of ``hulls`` (None: a shape that is not a hull), padded to ``counts`` (default:
        the most of each among them)."""
        present = [h for h in hulls if h is not None]
        if counts is None:
            sizes = [(len(h.vertices), len(h.planes), h.faces.shape[1], len(h.edges)) for h in present]
            counts = tuple(int(c) for c in np.max(sizes, axis=0)) if sizes else (0, 0, 0, 0)
        V, F, K, E = counts
        rows = [_padded(h, V, F, K, E) if h is not None else None for h in hulls]
        arrays = []
        for i, shape in enumerate(((V, 3), (F, 4), (F, K, 3), (E, 2, 3), (E, 2, 3))):
            stacked = np.stack([r[i] if r is not None else np.zeros(shape) for r in rows]) if rows else np.zeros((0, *shape))
            arrays.append(jnp.asarray(stacked, dtype=dtype))
        return Hulls(*arrays)

    def padded(self, counts: tuple[int, int, int, int]) -> "Hulls":
        """The same hulls with at least ``counts`` ``(V, F, K, E)`` (repeating as above; leading
        axes ``(..., S)`` kept)."""
        V, F, K, E = (max(a, b) for a, b in zip(self.counts, counts))
        if (V, F, K, E) == self.counts:
            return self
        if 0 in self.counts:
            lead, dtype = self.vertices.shape[:-2], self.vertices.dtype
            return Hulls(*(jnp.zeros(lead + shape, dtype) for shape in ((V, 3), (F, 4), (F, K, 3), (E, 2, 3), (E, 2, 3))))
        faces = _repeat(self.faces, K, -2, last=True)
        return Hulls(_repeat(self.vertices, V, -2), _repeat(self.planes, F, -2), _repeat(faces, F, -3), _repeat(self.edges, E, -3),
                     _repeat(self.edge_normals, E, -3))

    def hull(self, s: int) -> Hull:
        """Row ``s`` as a :class:`~jaxsim_like.parsers.hulls.Hull` (numpy, padding kept)."""
        return Hull(*(np.asarray(x)[s] for x in (self.vertices, self.planes, self.faces, self.edges, self.edge_normals)))


def _repeat(x: jax.Array, count: int, axis: int, last: bool = False) -> jax.Array:
    """``x`` with ``count`` entries along ``axis``, the new ones repeating its first (``last``: last)."""
    size = x.shape[axis]
    edge = jax.lax.slice_in_dim(x, size - 1 if last else 0, size if last else 1, axis=axis)
    return jnp.concatenate([x, jnp.repeat(edge, count - size, axis=axis)], axis=axis)


def _padded(hull: Hull, V: int, F: int, K: int, E: int) -> tuple[np.ndarray, ...]:
    def first(x: np.ndarray, count: int) -> np.ndarray:
        return np.concatenate([x, np.repeat(x[:1], count - len(x), axis=0)])

    faces = np.concatenate([hull.faces, np.repeat(hull.faces[:, -1:], K - hull.faces.shape[1], axis=1)], axis=1)
    return first(hull.vertices, V), first(hull.planes, F), first(faces, F), first(hull.edges, E), first(hull.edge_normals, E)
