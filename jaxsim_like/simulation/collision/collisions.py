"""What the contacts between links need, built once in numpy (:class:`Collisions`): the collision
table, each link's translational inverse weight (the effective masses that size the pair law),
the pair law and the law of the table's explicit pairs. :meth:`.world.WorldModel.build` builds it
for a world, :meth:`..params.SimulationParams.build` for the self-collisions of one model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from ...dynamics import zero_pose
from ...dynamics.model import Model
from ...host import to_device
from ...pytree import pytree_dataclass
from .forces import ExplicitPairs, PairLaw
from .table import CollisionTable


@pytree_dataclass(static=["table"])
class Collisions:
    """The contacts between the links of some models: the collision ``table`` (static), the
    ``pair_law`` (:class:`.forces.PairLaw`), each link's inverse weight ``inverse_weight (L,)``
    [1/kg] (global link order, see :func:`link_inverse_weights`) and the friction and margins of
    the table's pairs (``explicit_pairs``: explicit ones and two geoms' surfaces; None: none)."""

    table: CollisionTable
    pair_law: PairLaw
    inverse_weight: jax.Array
    explicit_pairs: ExplicitPairs | None = None

    @staticmethod
    def build(
        models: Sequence[Model],
        *,
        self_collision: Sequence[bool] | None = None,
        srdf: Sequence[Any] | None = None,
        budget: Any = None,
        pair_law: PairLaw | None = None,
        others: Sequence[Any] | None = None,
    ) -> "Collisions | None":
        """The contacts between the links of ``models`` (:meth:`.table.CollisionTable.build` with
        ``self_collision``, ``srdf``, ``budget`` and ``others``), with ``pair_law`` (default:
        :meth:`.forces.PairLaw.build`); None when no two links can touch."""
        table = CollisionTable.build(models, self_collision=self_collision, srdf=srdf, budget=budget, others=others)
        if not table.groups:
            return None
        return Collisions(
            table=table,
            pair_law=PairLaw.build() if pair_law is None else pair_law,
            inverse_weight=to_device(np.concatenate([link_inverse_weights(m) for m in models])),
            explicit_pairs=ExplicitPairs.of(table) if table.pairs else None,
        )


def link_inverse_weights(model: Model) -> np.ndarray:
    """``(N,)`` [1/kg]: each link's translational inverse weight at the zero configuration, the
    mean of the diagonal of ``J M^-1 J^T`` for the velocity of its origin (as MuJoCo's
    ``body_invweight0``): the inverse of the mass a force at the link meets, its joints free;
    zero for a link welded to the world. Computed on the host (:func:`.zero_pose.translational_inverse_weights`)."""
    return zero_pose.translational_inverse_weights(model)
