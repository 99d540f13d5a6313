"""Soft limits of revolute and prismatic joints (MJCF ``range`` of a ``limited`` hinge or slide,
MuJoCo's joint limit).

Joint ``k`` with position ``q`` [rad or m] (measured from ``qpos0``, as every MJCF joint) keeps
``position_limit_lower[k] <= q <= position_limit_upper[k]`` (the model's traced bounds): the
distances ``psi = q - lower - margin`` and ``psi = upper - q - margin`` to its two sides, engaged
while negative, decrease along ``-1`` and ``+1`` times the joint's velocity, so that each side
acts along ``+e_k`` and ``-e_k`` in joint space. The simulation step holds them as unilateral
constraint rows (:mod:`jaxsim_like.simulation.joint_limits`) instead of the spring-damper limit
of :func:`jaxsim_like.simulation.joint_effects.joint_effects`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.description import JointDescription
from ..pytree import pytree_dataclass


@pytree_dataclass(static=["dofs"])
class SoftLimits:
    """``c`` soft joint limits: joint ``dofs[k]`` (static, its index in the joint order) keeps its
    range, each side engaged within ``margin[k]`` [rad or m], with the reference
    ``time_constant[k]`` [s] and ``damping_ratio[k]`` (``solreflimit``; traced ``(c,)``), the
    impedance parameters ``solimp (c, 5)`` (``solimplimit``, see
    :func:`jaxsim_like.simulation.constraint_rows.impedance`) and the approximate inverse mass
    ``inverse_weight (c,)`` [1/(kg m^2) or 1/kg] of their compliance (MuJoCo's
    ``dof_invweight0``)."""

    margin: jax.Array
    time_constant: jax.Array
    damping_ratio: jax.Array
    solimp: jax.Array
    inverse_weight: jax.Array
    dofs: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        """The number of soft-limited joints ``c`` (static)."""
        return len(self.dofs)

    @staticmethod
    def none(dtype: Any) -> "SoftLimits":
        """No soft limits."""
        empty = jnp.asarray(np.zeros(0), dtype=dtype)
        return SoftLimits(empty, empty, empty, jnp.asarray(np.zeros((0, 5)), dtype=dtype), empty)

    def reduce(self, kept: Sequence[int]) -> "SoftLimits":
        """These limits on a model of the joints ``kept`` (their indices here, in the new joint
        order); the limits of the other joints go with them (needs concrete values)."""
        rows = [(k, kept.index(dof)) for k, dof in enumerate(self.dofs) if dof in kept]
        rows.sort(key=lambda row: row[1])
        index = np.asarray([k for k, _ in rows], dtype=int)
        fields = {name: jnp.asarray(np.asarray(getattr(self, name))[index]) for name in ("margin", "time_constant", "damping_ratio", "solimp", "inverse_weight")}
        return SoftLimits(**fields, dofs=tuple(new for _, new in rows))


def build_soft_limits(joints: Sequence[JointDescription], joint_names: Sequence[str], dtype: Any) -> SoftLimits:
    """The :class:`SoftLimits` of the ``joints`` of a description with a ``soft_limit``, on the
    model's joints ``joint_names`` (in the joint order)."""
    limited = sorted((joint_names.index(j.name), j.soft_limit) for j in joints if j.soft_limit is not None and j.name in joint_names)
    if not limited:
        return SoftLimits.none(dtype)

    def column(field: str) -> jax.Array:
        return jnp.asarray(np.array([getattr(limit, field) for _, limit in limited], dtype=float), dtype=dtype)

    return SoftLimits(
        margin=column("margin"),
        time_constant=column("time_constant"),
        damping_ratio=column("damping_ratio"),
        solimp=column("solimp"),
        inverse_weight=column("inverse_weight"),
        dofs=tuple(k for k, _ in limited),
    )
