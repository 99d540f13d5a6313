"""What the contacts between links need, built once in numpy (:class:`Collisions`): the collision
table, each link's translational inverse weight (the effective masses that size the pair law),
the pair law and the law of the table's explicit pairs. :meth:`.world.WorldModel.build` builds it
for a world, :meth:`..params.SimulationParams.build` for the self-collisions of one model."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...dynamics.crba import mass_matrix
from ...dynamics.hulls import Hulls
from ...dynamics.jacobians import link_jacobians
from ...dynamics.model import Model, Semantics
from ...dynamics.state import State
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
    ) -> "Collisions | None":
        """The contacts between the links of ``models`` (:meth:`.table.CollisionTable.build` with
        ``self_collision``, ``srdf`` and ``budget``), with ``pair_law`` (default:
        :meth:`.forces.PairLaw.build`); None when no two links can touch."""
        table = CollisionTable.build(models, self_collision=self_collision, srdf=srdf, budget=budget)
        if not table.groups:
            return None
        return Collisions(
            table=table,
            pair_law=PairLaw.build() if pair_law is None else pair_law,
            inverse_weight=jnp.asarray(np.concatenate([link_inverse_weights(m) for m in models])),
            explicit_pairs=ExplicitPairs.of(table) if table.pairs else None,
        )


def link_inverse_weights(model: Model) -> np.ndarray:
    """``(N,)`` [1/kg]: each link's translational inverse weight at the zero configuration, the
    mean of the diagonal of ``J M^-1 J^T`` for the velocity of its origin (as MuJoCo's
    ``body_invweight0``): the inverse of the mass a force at the link meets, its joints free;
    zero for a link welded to the world."""
    return np.asarray(_inverse_weights(_dynamics_only(model)), dtype=float)


def _dynamics_only(model: Model) -> Model:
    """``model`` without its names, frames and collision geometry, which its inverse weights do
    not read: models that differ only in those (the bodies of a pile) share one compilation of
    :func:`_inverse_weights`."""
    points, shapes, frames = (np.zeros((0,) + np.shape(x)[1:], x.dtype) for x in
                              (model.collidable_points, model.shape_transform, model.frame_transform))
    return dataclasses.replace(
        model, name="", link_names=("",) * model.number_of_links, joint_names=("",) * model.dofs, frame_names=(),
        frame_transform=frames, frame_link=(), collidable_points=points, point_radius=points[:, 0], point_terrain=points[:, 0],
        point_link=(), point_source=(), point_collision=(), shape_transform=shapes, shape_size=points, shape_link=(),
        shape_hulls=Hulls.of([], points.dtype), shape_kind=(), shape_source=(), shape_collision=(), collision_rules=None,
        semantics=Semantics(),
        point_friction=None, point_margin=None, point_torsion=None, point_rolling=None, ring_rim=None, ring_link=None, point_ring=None,
    )


@jax.jit
def _inverse_weights(model: Model) -> jax.Array:
    state = State.build(model)
    M = mass_matrix(model, state)
    J = link_jacobians(model, state)[:, :3, :]
    if M.shape[0] == 0:
        return jnp.zeros(model.number_of_links, M.dtype)
    response = jnp.linalg.solve(M, jnp.swapaxes(J, 0, 2).reshape(M.shape[0], -1)).reshape(M.shape[0], 3, -1)
    return jnp.einsum("nij,jin->n", J, response) / 3
