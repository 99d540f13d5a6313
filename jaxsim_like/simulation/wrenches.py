"""External link wrenches: one convention, one conversion, and wrenches applied for a while.

A *link wrench* is ``[force; torque] (6,)`` [N; N m] in world axes, about the link origin (the
convention of every input and output of the step). The step works with wrenches about the origin
of the internal frame ``G`` (world axes, origin at the base): :func:`about_frame_origin` converts
(it is the only conversion).

A *timed wrench* acts on one link from the step it was applied until a given step: rows of a
``(K, COLUMNS)`` table (force and torque in world axes, the application point in the link frame,
the link index, the physics step it acts until, exclusive), so that any number of pending
wrenches is a fixed-shape input.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import spatial

FORCE, TORQUE, POINT, LINK, UNTIL = slice(0, 3), slice(3, 6), slice(6, 9), 9, 10
COLUMNS = 11


def about_frame_origin(link_wrenches: jax.Array, points: jax.Array) -> jax.Array:
    """``(N, 6)``: wrenches ``(N, 6)`` (world axes) about ``points (N, 3)`` (each link's origin,
    or its COM, in some frame with world axes) taken about that frame's origin."""
    force = link_wrenches[:, :3]
    return jnp.concatenate([force, link_wrenches[:, 3:] + jnp.cross(points, force)], axis=-1)


def timed_table(count: int, dtype=float) -> np.ndarray:
    """An empty table of ``count`` timed wrenches (none acting)."""
    return np.zeros((count, COLUMNS), dtype=dtype)


def active_link_wrenches(
    number_of_links: int, table: jax.Array, step: jax.Array, W_R_L: jax.Array | None = None
) -> jax.Array:
    """``(N, 6)`` link wrenches of the timed wrenches of ``table (K, COLUMNS)`` acting at physics
    step ``step``, summed per link. Application points away from the link origin add their
    moment; they need the link orientations ``W_R_L (N, 3, 3)`` (None: every point is taken at
    the origin)."""
    active = step < table[:, UNTIL]
    links = table[:, LINK].astype(jnp.int32)
    wrenches = jnp.where(active[:, None], table[:, :6], 0.0)
    if W_R_L is not None:
        arms = spatial.rotate(W_R_L[links], table[:, POINT])
        wrenches = wrenches.at[:, 3:].add(jnp.cross(arms, wrenches[:, :3]))
    per_link = jnp.arange(number_of_links)[:, None] == links[None, :]
    return per_link.astype(wrenches.dtype) @ wrenches
