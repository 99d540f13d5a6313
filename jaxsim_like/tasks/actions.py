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
from ..dynamics.tree import ball_dof_names
from ..parsers.description import ActuatorDescription
from ..pytree import pytree_dataclass
from ..simulation import control
from ..simulation.world import ModelInputs

KINDS = ("torque", "position", "velocity")
_MODES = {"position": control.JointControlMode.position, "velocity": control.JointControlMode.velocity}
_TARGET = {"position": control.POSITION_TARGET, "velocity": control.VELOCITY_TARGET}


def _on_dof(actuator: ActuatorDescription) -> tuple[str, float] | None:
    """The degree of freedom a joint actuator drives and its scalar gear: its joint and gear, or on
    a ball joint about one of the joint's axes that axis's degree of freedom and the gear axis's
    component; None on a tendon or on a ball joint about an oblique axis."""
    if actuator.tendon:
        return None
    if actuator.gear_axis is None:
        return actuator.joint, actuator.gear
    nonzero = np.flatnonzero(actuator.gear_axis)
    if len(nonzero) != 1:
        return None
    return ball_dof_names(actuator.joint)[nonzero[0]], actuator.gear_axis[nonzero[0]]


@pytree_dataclass(static=["kind", "joints", "dofs"])
class ActionMap:
    """``kind`` (one of :data:`KINDS`), the actuated ``joints`` (indices into the model's joints,
    static) of a model with ``dofs`` joints, ``offset (A,)`` and ``scale (A,)`` [N m, N, rad,
    m, rad/s or m/s] of the map ``a -> offset + scale a``, and for the controlled kinds the
    control ``table (n, control.COLUMNS)`` and controller ``period`` [s] (None for torques).
    ``moments (A, n)``: a torque map with motors on tendons gives the joint torques
    ``moments^T (offset + scale a)``, row ``k`` the unit vector of actuator ``k``'s joint or its
    fixed tendon's coefficients ``dL/dq`` or, on a ball joint about an oblique axis, that gear
    axis on the joint's three degrees of freedom (its entry of ``joints`` is then -1; zero for a
    spatial tendon); None otherwise. ``tendon_moments (A, t)``: with motors on spatial tendons,
    whose ``dL/dq`` depends on the state, the forces ``tendon_moments^T (offset + scale a)``
    along the tendons (:attr:`.ModelInputs.tendon_forces`), row ``k`` the unit vector of actuator
    ``k``'s spatial tendon; None otherwise. ``damping (n,)``: with position actuators on ball
    joints with ``kv``, their damping ``gear^2 kv`` on the degree of freedom each drives (MuJoCo's
    ``-kv g . omega`` along the gear axis ``g``, :attr:`.ModelInputs.joint_damping`); None
    otherwise."""

    offset: jax.Array
    scale: jax.Array
    table: jax.Array | None
    period: jax.Array | None
    kind: str
    joints: tuple[int, ...]
    dofs: int
    moments: jax.Array | None = None
    tendon_moments: jax.Array | None = None
    damping: jax.Array | None = None

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

    @staticmethod
    def of_actuators(model: Model, actuators: Sequence[ActuatorDescription], *, period: float = 0.0) -> "ActionMap":
        """The map of a file's actuators (``ModelDescription.actuators``, all of one kind, one per
        joint): action component ``k`` is actuator ``k``'s control ``u = mid + half a`` over its
        ``ctrl_range`` (``u = a`` when unbounded), applied as MuJoCo applies it: a ``motor`` gives the
        torque ``gear gain u``; a ``position`` one the PID target ``u / gear`` with gains
        ``gear^2 (kp, 0, kv)`` (on a ball joint ``gear^2 (kp, 0, 0)`` and the damping ``gear^2 kv``
        of :attr:`damping`: the angular velocity's component, not the rate of the rotation
        vector the PID's derivative would take), a ``velocity`` one the velocity target ``u /
        gear`` with gains ``(gear^2 kv, 0, 0)``, their commands clipped to ``gear force_range``. Raises ValueError for
        mixed kinds, a joint driven twice, and a motor whose force range clips its controls. A
        motor on a tendon (``actuator.tendon``) gives the torques ``gear gain u dL/dq``
        (see :attr:`moments`). On a ball joint (``actuator.gear_axis``) an actuator about one of
        the joint's axes is one on that degree of freedom, its gear the axis's component (the
        rotation vector's component as MuJoCo's length); a motor about an oblique axis gives the
        torques ``gain u gear_axis`` (see :attr:`moments`), a position or velocity actuator
        about an oblique axis raises ValueError."""
        kinds = {actuator.kind for actuator in actuators}
        if len(kinds) != 1:
            raise ValueError(f"the actuators must be of one kind to form one action map, got {sorted(kinds) or 'none'}")
        kind = kinds.pop()
        on_dofs = [_on_dof(actuator) for actuator in actuators]
        oblique = [a.name for a, on in zip(actuators, on_dofs) if on is None and not a.tendon]
        if oblique and kind != "motor":
            raise ValueError(f"the {kind} actuator(s) {oblique} act on a ball joint about an axis along none of its own: no action map")
        joints = [on[0] if on else actuator.joint for actuator, on in zip(actuators, on_dofs)]
        with_moments = oblique or any(actuator.tendon for actuator in actuators)
        if not with_moments and len(set(joints)) != len(joints):
            raise ValueError("several actuators drive one joint: no action map represents their sum")
        ranges = np.array([a.ctrl_range for a in actuators], dtype=float)
        bounded = np.isfinite(ranges).all(axis=1)
        low, high = np.where(bounded[:, None], ranges, [-1.0, 1.0]).T  # unbounded: u = a
        mid, half = 0.5 * (low + high), 0.5 * (high - low)
        gear = np.array([on[1] if on else a.gear for a, on in zip(actuators, on_dofs)], dtype=float)
        force_low, force_high = np.array([a.force_range for a in actuators], dtype=float).T
        if kind == "motor":
            gain = np.array([a.gain for a in actuators], dtype=float)
            forces = np.sort(gain[:, None] * np.stack([mid - half, mid + half], axis=1), axis=1)
            clipped = [a.name for a, (f0, f1), lo, hi in zip(actuators, forces, force_low, force_high) if f0 < lo or f1 > hi]
            if clipped:
                raise ValueError(f"the force range of motor(s) {clipped} clips their controls: no affine action map")
            if with_moments:
                return ActionMap._with_moments(model, actuators, on_dofs, scale=gear * gain * half, offset=gear * gain * mid)
            return ActionMap.build(model, "torque", joints, scale=gear * gain * half, offset=gear * gain * mid)
        kp = np.array([a.kp if kind == "position" else a.kv for a in actuators], dtype=float)
        kd = np.array([a.kv if kind == "position" else 0.0 for a in actuators], dtype=float)
        on_ball = np.array([a.gear_axis is not None for a in actuators])
        gains = np.stack([gear**2 * kp, np.zeros_like(kp), np.where(on_ball, 0.0, gear**2 * kd)], axis=1)
        mapping = ActionMap.build(model, kind, joints, scale=half / gear, offset=mid / gear, gains=gains, period=period)
        rows = np.asarray(mapping.joints, dtype=int)
        damping = None
        if np.any(on_ball & (kd != 0.0)):
            damping = np.zeros(model.dofs)
            damping[rows] = np.where(on_ball, gear**2 * kd, 0.0)
            damping = jnp.asarray(damping)
        limits = np.sort(gear[:, None] * np.stack([force_low, force_high], axis=1), axis=1)
        table = np.array(mapping.table)
        table[rows, control.EFFORT_MIN] = np.maximum(table[rows, control.EFFORT_MIN], limits[:, 0])
        table[rows, control.EFFORT_MAX] = np.minimum(table[rows, control.EFFORT_MAX], limits[:, 1])
        return ActionMap(
            offset=mapping.offset, scale=mapping.scale, table=jnp.asarray(table), period=mapping.period, kind=kind, joints=mapping.joints,
            dofs=mapping.dofs, damping=damping,
        )

    @staticmethod
    def _with_moments(
        model: Model,
        motors: Sequence[ActuatorDescription],
        on_dofs: Sequence[tuple[str, float] | None],
        *,
        scale: np.ndarray,
        offset: np.ndarray,
    ) -> "ActionMap":
        """The torque map of ``motors`` on joints, tendons and ball joints about oblique axes (their
        entry of ``on_dofs`` None; see :attr:`moments` and :attr:`tendon_moments`)."""
        C = np.asarray(model.tendons.coefficients)  # zero rows for the spatial tendons
        eye = np.eye(model.dofs)

        def moment(motor: ActuatorDescription, on: tuple[str, float] | None) -> np.ndarray:
            if motor.tendon:
                return C[model.tendons.index(motor.tendon)]
            if on is not None:
                return eye[model.joint_index(on[0])]
            start = model.joint_index(ball_dof_names(motor.joint)[0])
            return np.pad(np.asarray(motor.gear_axis, dtype=float), (start, model.dofs - start - 3))

        moments = np.stack([moment(a, on) for a, on in zip(motors, on_dofs)])
        spatial = [a.tendon and model.tendons.index(a.tendon) in model.tendons.spatial for a in motors]
        tendon_moments = None
        if any(spatial):
            pulls = np.eye(model.tendons.count)
            tendon_moments = np.stack([pulls[model.tendons.index(a.tendon)] if s else np.zeros(model.tendons.count) for a, s in zip(motors, spatial)])
        return ActionMap(
            offset=jnp.asarray(offset),
            scale=jnp.asarray(scale),
            table=None,
            period=None,
            kind="torque",
            joints=tuple(model.joint_index(on[0]) if on else -1 for on in on_dofs),
            dofs=model.dofs,
            moments=jnp.asarray(moments),
            tendon_moments=None if tendon_moments is None else jnp.asarray(tendon_moments),
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
        if self.moments is not None:
            pulls = None if self.tendon_moments is None else values @ self.tendon_moments.astype(values.dtype)
            return ModelInputs(joint_torques=values @ self.moments.astype(values.dtype), tendon_forces=pulls)
        if self.kind == "torque":
            return ModelInputs(joint_torques=jnp.zeros(self.dofs, values.dtype).at[rows].set(values))
        table = self.table.astype(values.dtype).at[rows, _TARGET[self.kind]].set(values)
        damping = None if self.damping is None else self.damping.astype(values.dtype)
        return ModelInputs(table=table, period=self.period.astype(values.dtype), joint_damping=damping)
