"""Tendons: fixed ones, whose lengths are linear combinations of joint positions, spatial ones
through sites, and the equalities between fixed ones (MJCF ``<tendon><fixed>``,
``<tendon><spatial>`` and ``<equality><tendon>``).

A fixed tendon ``i`` of the ``t`` has the length ``L_i = length0_i + C_i q`` [m, or rad for a
tendon of hinges with unit coefficients] with the constant coefficient matrix ``C (t, n)``: ``L``
is MuJoCo's ``ten_length`` and ``C`` its ``ten_J``, with ``q`` measured from ``qpos0``. A spatial
tendon has a zero row of ``C`` and ``length0``, and the length of its path
(:class:`TendonPaths`): its rows depend on the state (:mod:`.tendon_kinematics`). A force ``f
(t,)`` along the tendons acts on the joints as the torques ``J^T f`` with ``J = dL/dq``. The
simulation step applies their passive forces, limits and equalities
(:mod:`jaxsim_like.simulation.tendons`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.description import TendonDescription, TendonEqualityDescription, TendonSegment
from ..parsers.errors import ModelLoadError
from ..pytree import pytree_dataclass
from .couplings import NO_SOLIMP


@pytree_dataclass(static=["tendon", "frame_a", "frame_b", "wrap_body", "wrap_kind"])
class TendonPaths:
    """``s`` segments of spatial tendons: segment ``k`` of tendon ``tendon[k]`` runs from the origin
    of the model's frame named ``frame_a[k]`` to that of ``frame_b[k]`` (sites; static), straight
    or, with a ``wrap_kind[k]`` (``"sphere"`` or ``"cylinder"``; ``""``: none), around the shape
    of radius ``wrap_radius[k]`` [m] at ``wrap_pose[k]`` ``(4, 4)`` in the link or frame named
    ``wrap_body[k]`` (see :mod:`.tendon_wraps`), and counts ``scale[k]`` times its length
    (``1 / divisor`` after a pulley). Traced: ``scale``, ``wrap_pose``, ``wrap_radius``."""

    scale: jax.Array
    wrap_pose: jax.Array
    wrap_radius: jax.Array
    tendon: tuple[int, ...] = ()
    frame_a: tuple[str, ...] = ()
    frame_b: tuple[str, ...] = ()
    wrap_body: tuple[str, ...] = ()
    wrap_kind: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """The number of segments ``s`` (static)."""
        return len(self.tendon)

    def renumbered(self, renumber: dict[int, int]) -> "TendonPaths":
        """The segments of the tendons in ``renumber`` (old index: new index), renumbered."""
        keep = [k for k, t in enumerate(self.tendon) if t in renumber]
        index = np.asarray(keep, dtype=int)
        return TendonPaths(
            scale=self.scale[index],
            wrap_pose=self.wrap_pose[index],
            wrap_radius=self.wrap_radius[index],
            tendon=tuple(renumber[self.tendon[k]] for k in keep),
            frame_a=tuple(self.frame_a[k] for k in keep),
            frame_b=tuple(self.frame_b[k] for k in keep),
            wrap_body=tuple(self.wrap_body[k] for k in keep),
            wrap_kind=tuple(self.wrap_kind[k] for k in keep),
        )


@pytree_dataclass(static=["names", "passive", "limited", "equality_names", "equality_soft"])
class Tendons:
    """``t`` tendons of a model of ``n`` joints, and ``e`` equalities between fixed ones.

    Traced: ``coefficients C (t, n)``, ``length0 (t,)`` [m] (the length at zero joint positions;
    zero rows for the spatial tendons, whose lengths are those of their ``paths``);
    the passive force along a tendon ``-stiffness (L - spring_upper)`` above ``spring_upper``,
    ``-stiffness (L - spring_lower)`` below ``spring_lower`` (zero between: MuJoCo's
    ``springlength`` dead band), ``- damping L_dot`` and the Coulomb ``friction`` (``(t,)``
    [N/m], [m], [N s/m], [N]); ``armature (t,)`` [kg], the inertia ``armature J^T J`` along a
    tendon (``J = dL/dq``); the limits ``range_lower <= L <= range_upper`` ``(t,)`` [m] (infinite when
    unlimited), engaged within ``margin (t,)`` [m] of a bound, with the reference
    ``limit_time_constant`` [s] and ``limit_damping_ratio`` ``(t,)``, MuJoCo's impedance
    ``limit_solimp (t, 5)`` and the approximate inverse mass ``limit_inverse_weight (t,)``
    [1/kg] (MuJoCo's ``tendon_invweight0``: the limit's compliance; zero, a hard limit); the equality rows
    ``equality_rows (e, n)`` and ``equality_offset (e,)`` [m] of the constraint
    ``equality_rows q = equality_offset``, with ``equality_time_constant`` [s] and
    ``equality_damping_ratio`` ``(e,)``, and MuJoCo's impedance ``equality_solimp (e, 5)`` and
    approximate inverse mass ``equality_inverse_weight (e,)`` [1/kg] of the ``equality_soft``
    ones; the spatial tendons' ``paths`` (:class:`TendonPaths`, their segments' scales traced,
    their sites static).

    Static: the tendon ``names (t,)``, the indices of the ``passive`` tendons (a force or an
    armature in the file: only these feel them in the step) and of the ``limited`` ones, the
    ``equality_names (e,)`` and ``equality_soft (e,)``: whether each equality has MuJoCo's
    impedance and compliance (an MJCF ``solimp``; else an impedance of one and no compliance).
    """

    coefficients: jax.Array
    length0: jax.Array
    stiffness: jax.Array
    spring_lower: jax.Array
    spring_upper: jax.Array
    damping: jax.Array
    friction: jax.Array
    armature: jax.Array
    range_lower: jax.Array
    range_upper: jax.Array
    margin: jax.Array
    limit_time_constant: jax.Array
    limit_damping_ratio: jax.Array
    limit_inverse_weight: jax.Array
    limit_solimp: jax.Array
    equality_rows: jax.Array
    equality_offset: jax.Array
    equality_time_constant: jax.Array
    equality_damping_ratio: jax.Array
    equality_solimp: jax.Array
    equality_inverse_weight: jax.Array
    paths: TendonPaths
    names: tuple[str, ...] = ()
    passive: tuple[int, ...] = ()
    limited: tuple[int, ...] = ()
    equality_names: tuple[str, ...] = ()
    equality_soft: tuple[bool, ...] = ()

    @staticmethod
    def none(dofs: int, dtype: Any) -> "Tendons":
        """No tendon (arrays put on the device from NumPy, as :meth:`JointCouplings.none`)."""
        return _from_arrays(
            dtype, np.zeros((0, dofs)), np.zeros((0, len(_PER_TENDON))), np.zeros((0, dofs)), np.zeros((0, 4)), np.zeros((0, 5)), np.zeros((0, 5))
        )

    @property
    def count(self) -> int:
        """The number of tendons ``t`` (static)."""
        return len(self.names)

    @property
    def rows(self) -> int:
        """The number of rows the step may enforce (static): passive tendons, two limits per
        limited tendon and the equalities."""
        return len(self.passive) + 2 * len(self.limited) + len(self.equality_names)

    @property
    def spatial(self) -> tuple[int, ...]:
        """The indices of the spatial tendons (static)."""
        return tuple(sorted(set(self.paths.tendon)))

    def index(self, name: str) -> int:
        """The index of tendon ``name``; ValueError listing the tendons otherwise."""
        if name not in self.names:
            raise ValueError(f"no tendon named {name!r}; the tendons are {list(self.names)}")
        return self.names.index(name)

    def reduce(self, kept: Sequence[int], locked: dict[int, float]) -> "Tendons":
        """The tendons of a model reduced to the joints ``kept`` (their indices here, in the new
        order), the ``locked`` ones (index: position [rad or m]) folded into the lengths and
        offsets; fixed tendons and equalities left without a moving joint are dropped, spatial
        tendons kept (their sites stay frames of the reduced model; concrete values only)."""
        C, G = np.asarray(self.coefficients), np.asarray(self.equality_rows)
        index, values = np.asarray(list(locked), dtype=int), np.asarray(list(locked.values()), dtype=float)
        length0 = np.asarray(self.length0) + C[:, index] @ values
        offset = np.asarray(self.equality_offset) - G[:, index] @ values
        C, G = C[:, list(kept)], G[:, list(kept)]
        spatial = np.isin(np.arange(C.shape[0]), self.spatial)
        keep, keep_rows = np.flatnonzero(np.any(C != 0, axis=1) | spatial), np.flatnonzero(np.any(G != 0, axis=1))
        per_tendon = np.stack(
            [length0] + [np.asarray(getattr(self, f)) for f in _PER_TENDON[1:]], axis=1
        )[keep]
        per_row = np.stack(
            [offset] + [np.asarray(getattr(self, f"equality_{f}")) for f in ("time_constant", "damping_ratio", "inverse_weight")], axis=1
        )
        renumber = {int(old): new for new, old in enumerate(keep)}
        return _from_arrays(
            self.coefficients.dtype, C[keep], per_tendon, G[keep_rows], per_row[keep_rows], np.asarray(self.limit_solimp)[keep],
            np.asarray(self.equality_solimp)[keep_rows],
            paths=self.paths.renumbered(renumber),
            names=tuple(self.names[i] for i in keep),
            passive=tuple(renumber[i] for i in self.passive if i in renumber),
            limited=tuple(renumber[i] for i in self.limited if i in renumber),
            equality_names=tuple(self.equality_names[i] for i in keep_rows),
            equality_soft=tuple(self.equality_soft[i] for i in keep_rows),
        )


_PER_TENDON = (
    "length0", "stiffness", "spring_lower", "spring_upper", "damping", "friction", "armature",
    "range_lower", "range_upper", "margin", "limit_time_constant", "limit_damping_ratio", "limit_inverse_weight",
)


def _from_arrays(
    dtype: Any, C: np.ndarray, per_tendon: np.ndarray, G: np.ndarray, per_row: np.ndarray, solimp: np.ndarray,
    equality_solimp: np.ndarray, paths: TendonPaths | None = None, **static
) -> Tendons:
    """:class:`Tendons` from NumPy: ``C (t, n)``, the per-tendon fields ``(t, 13)`` in
    ``_PER_TENDON`` order, ``G (e, n)``, the per-row offset, time constant, ratio and inverse
    weight ``(e, 4)``, the limits' ``solimp (t, 5)``, the equalities' ``equality_solimp (e, 5)``
    and the ``paths`` of the spatial tendons (default: none)."""
    arrays = {name: jnp.asarray(per_tendon[:, k], dtype=dtype) for k, name in enumerate(_PER_TENDON)}
    paths = _paths([], dtype) if paths is None else paths
    return Tendons(
        coefficients=jnp.asarray(C, dtype=dtype),
        equality_rows=jnp.asarray(G, dtype=dtype),
        equality_offset=jnp.asarray(per_row[:, 0], dtype=dtype),
        equality_time_constant=jnp.asarray(per_row[:, 1], dtype=dtype),
        equality_damping_ratio=jnp.asarray(per_row[:, 2], dtype=dtype),
        equality_inverse_weight=jnp.asarray(per_row[:, 3], dtype=dtype),
        equality_solimp=jnp.asarray(equality_solimp, dtype=dtype),
        limit_solimp=jnp.asarray(solimp, dtype=dtype),
        paths=paths,
        **arrays,
        **static,
    )


def _paths(segments: Sequence[tuple[int, TendonSegment]], dtype: Any) -> TendonPaths:
    """The :class:`TendonPaths` of ``(tendon index, segment)`` pairs."""
    wraps = [segment.wrap for _, segment in segments]
    poses = [np.eye(4) if wrap is None else np.asarray(wrap.B_H_G, dtype=float) for wrap in wraps]
    return TendonPaths(
        scale=jnp.asarray(np.array([segment.scale for _, segment in segments], dtype=float), dtype=dtype),
        wrap_pose=jnp.asarray(np.array(poses, dtype=float).reshape(-1, 4, 4), dtype=dtype),
        wrap_radius=jnp.asarray(np.array([0.0 if wrap is None else wrap.radius for wrap in wraps], dtype=float), dtype=dtype),
        tendon=tuple(i for i, _ in segments),
        frame_a=tuple(segment.frame_a for _, segment in segments),
        frame_b=tuple(segment.frame_b for _, segment in segments),
        wrap_body=tuple("" if wrap is None else wrap.body for wrap in wraps),
        wrap_kind=tuple("" if wrap is None else wrap.kind for wrap in wraps),
    )


def build_tendons(
    tendons: Sequence[TendonDescription],
    equalities: Sequence[TendonEqualityDescription],
    joint_names: Sequence[str],
    dtype: Any,
    frame_names: Sequence[str] = (),
    link_names: Sequence[str] = (),
) -> Tendons:
    """The :class:`Tendons` of a description's ``tendons`` and ``equalities`` over the joints
    ``joint_names`` (the model's serialisation), the spatial ones through its frames
    ``frame_names`` and around shapes on its links ``link_names`` or frames. A tendon naming a
    joint the model does not move, or a frame or link it does not have, is a
    :class:`ModelLoadError` at the tendon."""
    dofs = len(joint_names)
    if not tendons:
        return Tendons.none(dofs, dtype)
    C = np.zeros((len(tendons), dofs))
    segments = [(i, segment) for i, tendon in enumerate(tendons) for segment in tendon.segments]
    for i, segment in segments:
        for frame in (segment.frame_a, segment.frame_b):
            if frame not in frame_names:
                where = tendons[i].location
                message = f"spatial tendon '{tendons[i].name}' passes through '{frame}', which is not a frame of the model"
                raise ModelLoadError(message, file=where.file, line=where.line, element=where.element)
    for i, segment in segments:
        if segment.wrap is not None and segment.wrap.body not in frame_names and segment.wrap.body not in link_names:
            where = tendons[i].location
            message = f"spatial tendon '{tendons[i].name}' wraps around a shape on '{segment.wrap.body}', which is not a link or frame of the model"
            raise ModelLoadError(message, file=where.file, line=where.line, element=where.element)
    paths = _paths(segments, dtype)
    for i, tendon in enumerate(tendons):
        for joint, coefficient in tendon.coefficients.items():
            if joint not in joint_names:
                where = tendon.location
                message = f"tendon '{tendon.name}' names joint '{joint}', which the model does not move"
                raise ModelLoadError(message, file=where.file, line=where.line, element=where.element)
            C[i, list(joint_names).index(joint)] += coefficient
    per_tendon = np.array(
        [
            [t.length0, t.stiffness, *t.spring_length, t.damping, t.friction, t.armature, *t.range, t.margin, t.time_constant,
             t.damping_ratio, t.inverse_weight]
            for t in tendons
        ],
        dtype=float,
    )
    names = [t.name for t in tendons]
    G = np.zeros((len(equalities), dofs))
    for r, equality in enumerate(equalities):
        G[r] = C[names.index(equality.tendon1)]
        if equality.tendon2:
            G[r] -= equality.multiplier * C[names.index(equality.tendon2)]
    per_row = np.array([[e.offset, e.time_constant, e.damping_ratio, e.inverse_weight] for e in equalities], dtype=float).reshape(-1, 4)
    passive = tuple(i for i, t in enumerate(tendons) if t.stiffness or t.damping or t.friction or t.armature)
    solimp = np.array([t.solimp for t in tendons], dtype=float).reshape(-1, 5)
    equality_solimp = np.array([e.solimp if e.solimp is not None else NO_SOLIMP for e in equalities], dtype=float).reshape(-1, 5)
    return _from_arrays(
        dtype, C, per_tendon, G, per_row, solimp, equality_solimp, paths,
        names=tuple(names),
        passive=passive,
        limited=tuple(i for i, t in enumerate(tendons) if t.limited),
        equality_names=tuple(e.name for e in equalities),
        equality_soft=tuple(e.solimp is not None for e in equalities),
    )
