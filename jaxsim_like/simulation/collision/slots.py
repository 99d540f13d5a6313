"""The result of a narrow phase: a fixed number of contact slots per pair."""

from __future__ import annotations

from typing import NamedTuple

import jax


class Slots(NamedTuple):
    """``k`` contact slots of one pair (world axes): ``position (k, 3)`` [m] midway between the two
    surfaces, unit ``normal (k, 3)`` from the second shape (b) towards the first (a), ``depth (k,)``
    [m] (positive when penetrating) and ``valid (k,)`` (the slot holds a contact candidate);
    ``feature (k,)`` (int): which of the kernel's candidate contacts each slot holds, the same one
    for as long as that contact lasts (a corner, an edge crossing), so that the contact's
    tangential memory follows it when slots are filled in a different order; ``None``: slot ``i``
    always holds candidate ``i``."""

    position: jax.Array
    normal: jax.Array
    depth: jax.Array
    valid: jax.Array
    feature: jax.Array | None = None

    def placed(self, H: jax.Array) -> "Slots":
        """These slots, of a pair computed in the frame at world pose ``H (4, 4)``, in world axes."""
        R, c = H[:3, :3], H[:3, 3]
        return self._replace(position=self.position @ R.T + c, normal=self.normal @ R.T)
