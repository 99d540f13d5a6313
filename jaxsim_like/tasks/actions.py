"""How an action ``(A,)`` in ``[-1, 1]`` acts on the robot (model 0 of the world).

Three kinds: ``"torque"`` (the joint torques ``offset + scale a`` on the actuated joints, no
controller), ``"position"`` and ``"velocity"`` (the targets ``offset + scale a`` of the world's
PID controllers, written into the control table, so the PID runs at every physics step, or at
the table's ``period``, inside the world step). Actions are clipped to ``[-1, 1]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.model import Model
from ..pytree import pytree_dataclass
from ..simulation import control
from ..simulation.world import ModelInputs

KINDS = ("torque", "position", "velocity")
_MODES = {"position": control.JointControlMode.position, "velocity": control.JointControlMode.velocity}
_TARGET = {"position": control.POSITION_TARGET, "velocity": control.VELOCITY_TARGET}


@pytree_dataclass(static=["kind", "joints", "dofs"])
class ActionMap:
    """``kind`` (one of :data:`KINDS`), the actuated ``joints`` (indices into the model's joints,
    static) of a model with ``dofs`` joints, ``offset (A,)`` and ``scale (A,)`` [N m, N, rad,
    m, rad/s or m/s] of the map ``a -> offset + scale a``, and for the controlled kinds the
    control ``table (n, control.COLUMNS)`` and controller ``period`` [s] (None for torques)."""

    offset: jax.Array
    scale: jax.Array
    table: jax.Array | None
    period: jax.Array | None
    kind: str
    joints: tuple[int, ...]
    dofs: int

    @staticmethod
    def build(
        model: Model,
        kind: str,
        joints: Sequence[str] | None = None,
        *,
        scale: Any = 1.0,
        offset: Any = 0.0,
        gains: Any = None,
        period: float = 0.0,
    ) -> "ActionMap":
        """The map of ``kind`` on the named ``joints`` of ``model`` (default: all). ``gains``:
        the PID gains ``(kp, ki, kd)`` of the controlled kinds, one triple or one per actuated
        joint; the effort and velocity limits are the model's."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        names = model.joint_names if joints is None else tuple(joints)
        indices = tuple(model.joint_index(name) for name in names)
        count = len(indices)
        offset = np.broadcast_to(np.asarray(offset, float), (count,)).copy()
        scale = np.broadcast_to(np.asarray(scale, float), (count,)).copy()
        table = None
        if kind != "torque":
            if gains is None:
                raise ValueError(f"a {kind} action map needs the PID gains (kp, ki, kd)")
            gains = np.broadcast_to(np.asarray(gains, float), (count, 3))
            table = control.default_table(np.asarray(model.effort_limit), np.asarray(model.velocity_limit))
            table[:, control.MODE] = int(control.JointControlMode.idle)
            rows = np.asarray(indices, dtype=int)
            table[rows, control.MODE] = int(_MODES[kind])
            table[rows, control.KP], table[rows, control.KI], table[rows, control.KD] = gains.T
            table[rows, control.I_MIN], table[rows, control.I_MAX] = -np.inf, np.inf
            table[:, control.RESET] = 0.0
            table[rows, _TARGET[kind]] = offset
        return ActionMap(
            offset=jnp.asarray(offset),
            scale=jnp.asarray(scale),
            table=None if table is None else jnp.asarray(table),
            period=None if table is None else jnp.asarray(float(period)),
            kind=kind,
            joints=indices,
            dofs=model.dofs,
        )

    @property
    def size(self) -> int:
        """The number of action components ``A``."""
        return len(self.joints)

    def values(self, action: jax.Array) -> jax.Array:
        """``offset + scale clip(action, -1, 1)`` ``(A,)``."""
        action = jnp.asarray(action)
        if action.shape != (self.size,):
            raise ValueError(f"action must have shape ({self.size},), got {tuple(action.shape)}")
        return self.offset + self.scale * jnp.clip(action, -1.0, 1.0)

    def inputs(self, action: jax.Array) -> ModelInputs:
        """The :class:`ModelInputs` of the robot under ``action (A,)``."""
        values = self.values(action)
        rows = np.asarray(self.joints, dtype=int)
        if self.kind == "torque":
            return ModelInputs(joint_torques=jnp.zeros(self.dofs, values.dtype).at[rows].set(values))
        table = self.table.astype(values.dtype).at[rows, _TARGET[self.kind]].set(values)
        return ModelInputs(table=table, period=self.period.astype(values.dtype))
