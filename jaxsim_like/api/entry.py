"""What a world keeps for one model: its description, the dynamics model, the device arrays of
the run (state, controllers, history, last step) and the host-side control inputs.

Control inputs (targets, modes, gains, limits, wrench slots) are numpy arrays edited in place by
the handles and uploaded to the device before a run when they changed. Resets are pending until
the next run, as in ScenarIO. Derived values (link poses, velocities...) are computed on first
access after a run by :func:`.engine.observe` and cached until the next run.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import configuration, spatial
from ..dynamics.model import Model
from ..parsers.description import ModelDescription
from ..simulation import ModelParams, control, wrenches
from . import engine, errors
from .types import JointControlMode
from .utils import log

_GENERATIONS = itertools.count(1)


@functools.lru_cache(maxsize=256)
def _positions(names: tuple[str, ...]) -> dict[str, int]:
    return {name: i for i, name in enumerate(names)}


def _indices(all_names: tuple[str, ...], names: Any, kind: str, not_found: Callable[[str, tuple], Exception]) -> list[int]:
    """Indices of ``names`` in ``all_names`` (all of them when empty); ``not_found(name, all_names)``
    is raised for an unknown name, TypeError for a single string."""
    if isinstance(names, str):
        raise TypeError(f"{kind}_names must be a sequence of names, got the string {names!r}")
    names = list(names)
    if not names:
        return list(range(len(all_names)))
    positions = _positions(tuple(all_names))
    indices = []
    for name in names:
        if name not in positions:
            raise not_found(name, all_names)
        indices.append(positions[name])
    return indices

# Rows of the ring buffer of commanded torques: histories up to this size never recompile the run.
HISTORY_CAPACITY = 128

# Limits at or above this value are unlimited (ScenarIO users remove limits with np.finfo(float).max).
UNLIMITED = float(np.finfo(float).max)

# Peak speed [rad/s or m/s] of an interpolated position trajectory when the joint has no velocity limit.
DEFAULT_INTERPOLATION_SPEED = 1.0

# ScenarIO's targets, in the order of the target flags.
TARGETS = ("position", "velocity", "acceleration", "force")
_TARGET_COLUMN = {
    "position": control.POSITION_TARGET,
    "velocity": control.VELOCITY_TARGET,
    "acceleration": control.ACCELERATION_TARGET,
    "force": control.FORCE_TARGET,
}
_M = JointControlMode
# The control modes that accept each target (ScenarIO's rules).
ACCEPTED_MODES = {
    "position": (_M.position, _M.position_interpolated, _M.idle, _M.force),
    "velocity": (_M.velocity, _M.velocity_follower_dart, _M.force),
    "acceleration": (_M.idle, _M.force),
    "force": (_M.force, _M.position, _M.position_interpolated, _M.velocity),
}
# The control modes of a ball joint: torques only (its controllers would act on the components of
# a rotation vector, which is no orientation controller).
BALL_MODES = (_M.idle, _M.force)
# The targets a ball joint takes.
BALL_TARGETS = ("acceleration", "force")


def joint_dofs(model: Model) -> dict[str, tuple[int, ...]]:
    """The degrees of freedom of each joint of the object API, by name, in the model's order: a
    scalar joint's one, a ball joint's three (``b:x``, ``b:y``, ``b:z`` in the model)."""
    balls = dict(zip(model.ball_dofs, model.ball_joint_names))
    joints, k = {}, 0
    while k < model.dofs:
        if k in balls:
            joints[balls[k]] = (k, k + 1, k + 2)
            k += 3
        else:
            joints[model.joint_names[k]] = (k,)
            k += 1
    return joints


class ModelEntry:
    """One model of a world (see the module docstring). ``name`` is the world-level name."""

    def __init__(
        self,
        name: str,
        description: ModelDescription,
        model: Model,
        params: ModelParams | None,
        srdf: Any = None,
        step: int = 0,
    ) -> None:
        self.name = name
        self.generation = next(_GENERATIONS)
        self.description = description
        self.model = model
        self.static = params is None
        self.params = params
        self.srdf = srdf
        self.joints = joint_dofs(model)
        self.dof_joint = {k: name for name, dofs in self.joints.items() for k in dofs}
        self.balls = {name: dofs for name, dofs in self.joints.items() if len(dofs) == 3}
        self.layout = engine.Layout.of(model, HISTORY_CAPACITY)
        self.sim = engine.initial_packed(model, HISTORY_CAPACITY, step)
        self.table = control.default_table(np.asarray(model.effort_limit), np.asarray(model.velocity_limit))
        self._pid_resets = True  # the default table resets every PID at the first step
        self.period = math.inf
        self.target_set = np.zeros((model.dofs, len(TARGETS)), dtype=bool)
        self.leaders = {f: model.joint_names[l] if l >= 0 else None for f, l in zip(model.couplings.follower, model.couplings.leader)}
        self._warned_followers: set[int] = set()
        self.target_set[:, TARGETS.index("force")] = True
        self.history_size = np.zeros(model.dofs, dtype=int)
        self.history_start = np.zeros(model.dofs, dtype=int)
        self.features = engine.Features()
        self.contacts_enabled = np.zeros(model.number_of_links, dtype=bool)
        self.self_collision = False
        self.base_targets: dict[str, np.ndarray] = {}
        self.plugins: list[tuple[Callable, Any]] = []
        self.pending: dict[str, Any] = {"joint_positions": {}, "joint_velocities": {}}
        self._wrenches: list[dict[str, Any]] = []
        self._inputs: engine.ModelInputs | None = None
        self.cache: dict[str, Any] = {}

    # ----- names and indices -------------------------------------------------------------

    def joint_names(self, joint_names: Any = ()) -> list[str]:
        """The joints ``joint_names`` (all joints when empty); JointNotFound for unknown names."""
        names = tuple(self.joints)
        return [names[i] for i in _indices(names, joint_names, "joint", lambda name, known: errors.JointNotFound(
            name, f"model '{self.name}' has joints {list(known)}"))]

    def joint_indices(self, joint_names: Any = ()) -> list[int]:
        """The degrees of freedom of ``joint_names`` (all joints when empty), in their order: three
        per ball joint; JointNotFound for unknown names."""
        if isinstance(joint_names, (tuple, list)) and not joint_names:
            return list(range(self.model.dofs))
        return [k for name in self.joint_names(joint_names) for k in self.joints[name]]

    def link_indices(self, link_names: Any = ()) -> list[int]:
        """Indices of ``link_names`` (all links when empty); LinkNotFound for unknown names."""
        return _indices(self.model.link_names, link_names, "link", lambda name, names: errors.LinkNotFound(
            name, f"model '{self.name}' has links {list(names)}"))

    def scoped_joint(self, index: int) -> str:
        """``model::joint`` of the joint of degree of freedom ``index``."""
        return f"{self.name}::{self.dof_joint[index]}"

    def values(self, data: Any, size: int, what: str) -> np.ndarray:
        """``data`` as a float array of ``size`` values; DOFMismatch otherwise."""
        array = np.asarray(data, dtype=float).reshape(-1)
        if array.size != size:
            raise errors.DOFMismatch(size, array.size, f"{self.name}: {what}")
        if np.isnan(array).any():
            raise ValueError(f"{what} of model '{self.name}' must not contain NaN")
        return array

    # ----- cached reads ------------------------------------------------------------------

    def field(self, name: str) -> np.ndarray:
        """A field of the packed :class:`~.engine.ModelSim` after the last run (see
        :meth:`.engine.Layout.fields`), as a read-only numpy view (valid until the next run)."""
        packed = self.cache.get("packed")
        if packed is None:
            packed = self.cache["packed"] = np.asarray(self.sim)
        start, stop, shape = engine.offsets(self.layout)[name]
        return packed[start:stop].reshape(shape)

    def state(self, key: str) -> np.ndarray:
        """A field of the state after the last run, as a read-only numpy array."""
        return self.field(key)

    def last(self) -> dict[str, np.ndarray]:
        """The last physics step as numpy arrays (cached until the next run)."""
        if "last" not in self.cache:
            points, joints = self.field("points"), self.field("joints")
            self.cache["last"] = {
                "commands": joints[engine.COMMAND],
                "joint_accelerations": joints[engine.ACCELERATION],
                "joint_torques": joints[engine.APPLIED],
                "contact_positions": points[:, engine.POSITION],
                "contact_normals": points[:, engine.NORMAL],
                "penetration": points[:, engine.PENETRATION],
                "contact_forces": points[:, engine.POINT_FORCE],
                "in_contact": points[:, engine.IN_CONTACT] > 0.5,
            }
        return self.cache["last"]

    def observation(self) -> engine.Observation:
        """The :class:`~.engine.Observation` after the last run (computed once, as numpy arrays)."""
        if "observation" not in self.cache:
            value = engine.observe(self.model, self.sim, self.layout)
            self.cache["observation"] = engine.Observation(*(np.array(x) for x in jax.device_get(value)))
        return self.cache["observation"]

    # ----- control inputs ----------------------------------------------------------------

    def touch(self) -> None:
        """Mark the control inputs as changed (uploaded before the next run)."""
        self._inputs = None

    def positions(self) -> np.ndarray:
        """The position ``(n,)`` of each degree of freedom after the last run: a scalar joint's, and
        the rotation vector ``log Q`` [rad] (child frame, angle in ``[0, pi]``) of a ball joint's
        quaternion ``Q`` (cached until the next run)."""
        if not self.balls:
            return self.state("joint_positions")
        if "positions" not in self.cache:
            raw = jnp.asarray(self.state("joint_positions"))
            self.cache["positions"] = np.asarray(configuration.dof_positions(self.model, raw))
        return self.cache["positions"]

    def current_positions(self) -> np.ndarray:
        """The positions ``(n,)`` of :meth:`positions` as the next step will see them: with the
        pending resets applied."""
        positions = self.positions().copy()
        for index, value in self.pending["joint_positions"].items():
            positions[index] = value
        return positions

    def current_configuration(self) -> np.ndarray:
        """The joint positions ``(nq,)`` of the state (ball joints as quaternions) as the next step
        will see them: with the pending resets applied (a ball's pending rotation vector as the
        quaternion ``exp``)."""
        raw = self.state("joint_positions").copy()
        pending = self.pending["joint_positions"]
        if not pending:
            return raw
        layout = configuration.position_layout(self.model)
        entry_of = dict(zip(layout.scalar_dofs.tolist(), layout.scalar_positions.tolist()))
        for index, value in pending.items():
            if index in entry_of:
                raw[entry_of[index]] = value
        if self.balls:
            current = self.current_positions()
            for b, start in enumerate(self.model.ball_dofs):
                if any(start + k in pending for k in range(3)):
                    first = layout.ball_positions[b]
                    raw[first : first + 4] = np.asarray(spatial.quaternion_exp(jnp.asarray(current[start : start + 3])))
        return raw

    def current_velocities(self) -> np.ndarray:
        velocities = self.state("joint_velocities").copy()
        for index, value in self.pending["joint_velocities"].items():
            velocities[index] = value
        return velocities

    def mode(self, index: int) -> JointControlMode:
        return JointControlMode(int(self.table[index, control.MODE]))

    def set_mode(self, index: int, mode: Any, time: float) -> None:
        """Switch joint ``index`` to ``mode``: its targets become the current state, its PID resets."""
        try:
            mode = JointControlMode(int(mode))
        except ValueError:
            raise errors.JointError(f"unknown control mode {mode!r}", self.scoped_joint(index)) from None
        if mode == JointControlMode.invalid:
            raise errors.JointError("the invalid control mode cannot be set", self.scoped_joint(index))
        self.check_mode(index, mode)
        if mode == JointControlMode.velocity_follower_dart and not self.features.exact_velocity:
            self.features = self.features._replace(exact_velocity=True)
        row = self.table[index]
        row[control.MODE] = int(mode)
        self.target_set[index] = False
        if mode in (JointControlMode.position, JointControlMode.position_interpolated):
            position = self.current_positions()[index]
            row[control.POSITION_TARGET] = row[control.START_POSITION] = position
            row[control.START_TIME], row[control.DURATION] = time, 0.0
            self.target_set[index, TARGETS.index("position")] = True
        elif mode in (JointControlMode.velocity, JointControlMode.velocity_follower_dart):
            row[control.VELOCITY_TARGET] = self.current_velocities()[index]
            self.target_set[index, TARGETS.index("velocity")] = True
        else:
            row[control.FORCE_TARGET] = 0.0
            self.target_set[index, TARGETS.index("force")] = True
        row[control.RESET] = 1.0
        self._pid_resets = True
        self.touch()

    def check_mode(self, index: int, mode: JointControlMode) -> None:
        """JointError if degree of freedom ``index`` cannot be controlled in ``mode`` (a ball joint:
        only :data:`BALL_MODES`)."""
        if self.dof_joint[index] in self.balls and mode not in BALL_MODES:
            raise errors.JointError(
                f"a ball joint cannot be controlled in mode '{mode.name}': its position is a rotation, whose PIDs on the "
                f"components of a rotation vector would be no orientation controller; use {' or '.join(m.name for m in BALL_MODES)} "
                "(torques about the child frame's axes)",
                self.scoped_joint(index),
            )

    def set_target(self, kind: str, index: int, value: float, time: float) -> None:
        """Set the ``kind`` target of joint ``index``; JointError if its mode does not accept it.
        A mimic joint's target is kept, with one logged warning per joint, and acts on nothing:
        the step's controllers leave the followers of joint couplings idle."""
        mode = self.mode(index)
        if kind not in BALL_TARGETS and self.dof_joint[index] in self.balls:
            raise errors.JointError(
                f"a ball joint takes no {kind} target (its controllers are torques only: force control)", self.scoped_joint(index)
            )
        if mode not in ACCEPTED_MODES[kind]:
            accepted = ", ".join(m.name for m in ACCEPTED_MODES[kind])
            raise errors.JointError(
                f"control mode '{mode.name}' does not accept a {kind} target (accepted in: {accepted})",
                self.scoped_joint(index),
            )
        row = self.table[index]
        if kind == "position" and mode == JointControlMode.position_interpolated:
            start = float(
                control.minimum_jerk(
                    row[control.START_POSITION], row[control.POSITION_TARGET], row[control.START_TIME], row[control.DURATION], time, np
                )
            )
            speed = min(abs(row[control.VELOCITY_MIN]), abs(row[control.VELOCITY_MAX]))
            speed = speed if 0 < speed < UNLIMITED else DEFAULT_INTERPOLATION_SPEED
            # A quintic from start to goal in T seconds peaks at 15/8 |goal - start| / T.
            row[control.START_POSITION], row[control.START_TIME] = start, time
            row[control.DURATION] = 1.875 * abs(value - start) / speed
        row[_TARGET_COLUMN[kind]] = value
        self.target_set[index, TARGETS.index(kind)] = True
        if index in self.leaders and index not in self._warned_followers:
            self._warned_followers.add(index)
            leader = f"its leader '{self.leaders[index]}'" if self.leaders[index] else "its rule"
            log.warning(
                "[%s] a mimic joint follows %s: its targets are kept but its controller applies nothing",
                self.scoped_joint(index), leader,
            )
        self.touch()

    def target(self, kind: str, index: int) -> float:
        """The ``kind`` target of joint ``index``; JointError if none was set."""
        if not self.target_set[index, TARGETS.index(kind)]:
            raise errors.JointError(f"no {kind} target was set", self.scoped_joint(index))
        return float(self.table[index, _TARGET_COLUMN[kind]])

    def reset_pid(self, index: int) -> None:
        self.table[index, control.RESET] = 1.0
        self._pid_resets = True
        self.touch()

    def add_wrench(self, link: int, wrench: np.ndarray, point: np.ndarray, steps: int) -> None:
        """A wrench ``[force; torque]`` (world axes, torque about the application point) applied at
        ``point`` (link frame) for ``steps >= 1`` physics steps."""
        if not self.features.wrenches:
            self.features = self.features._replace(wrenches=True)
        self._wrenches.append({"link": link, "wrench": wrench, "point": point, "steps": steps})
        self.touch()

    def set_model(self, **changes: Any) -> None:
        """Change traced fields of the dynamics model (limits, friction): no recompilation."""
        self.model = self.model.replace(**{k: jnp.asarray(v, self.model.link_mass.dtype) for k, v in changes.items()})
        self.cache.clear()

    # ----- runs --------------------------------------------------------------------------

    def inputs(self) -> engine.ModelInputs:
        """The control inputs of the next run (rebuilt only after a change)."""
        if self._inputs is None:
            capacity = 4
            while capacity < len(self._wrenches):
                capacity *= 2
            slots = wrenches.timed_table(capacity)
            for slot, item in enumerate(self._wrenches):
                slots[slot, :6], slots[slot, engine.POINT] = item["wrench"], item["point"]
                slots[slot, engine.LINK], slots[slot, engine.STEPS] = item["link"], item["steps"]
            # On the device once per change: numpy arguments would be copied at every run.
            self._inputs = jax.device_put(engine.ModelInputs(table=self.table.copy(), period=np.asarray(self.period), wrenches=slots))
        return self._inputs

    def set_params(self, params: ModelParams) -> None:
        self.params = params

    def apply_resets(self) -> bool:
        """Apply the pending resets to the state; True if there were any."""
        pending = self.pending
        if not (pending["joint_positions"] or pending["joint_velocities"] or len(pending) > 2):
            return False
        configuration_now = self.current_configuration()
        packed = np.array(self.sim)
        state = engine.unpack(packed, self.layout).state  # views: writing them writes ``packed``
        state.joint_positions[:] = configuration_now
        for index, value in pending["joint_velocities"].items():
            state.joint_velocities[index] = value
        for key in ("base_position", "base_quaternion", "base_velocity"):
            if key in pending:
                getattr(state, key)[:] = pending[key]
        if pending["joint_positions"] or "base_position" in pending or "base_quaternion" in pending:
            state.contact_deformation[:] = 0.0
        self.sim = jnp.asarray(packed)
        self.pending = {"joint_positions": {}, "joint_velocities": {}}
        self.cache.clear()
        return True

    def finish_run(self, sim: jax.Array, steps: int) -> None:
        """Store the result of a run of ``steps >= 1`` physics steps and update the host inputs
        (the PID resets it applied, the wrench steps it consumed)."""
        self.sim = sim
        if self._pid_resets:
            self.table[:, control.RESET] = 0.0
            self._pid_resets = False
            self.touch()
        if self._wrenches:
            for item in self._wrenches:
                item["steps"] -= steps
            self._wrenches = [item for item in self._wrenches if item["steps"] > 0]
            self.touch()
        self.cache.clear()

    # ----- history of applied joint forces -----------------------------------------------

    def enable_history(self, indices: list[int], enable: bool, size: int, step_count: int) -> None:
        if enable and int(size) < 1:
            raise ValueError(f"max_history_size must be at least 1, got {size}")
        for index in indices:
            if not enable:
                self.history_size[index] = 0
            elif self.history_size[index] == 0:
                self.history_size[index] = int(size)
                self.history_start[index] = step_count
        if enable and not self.features.history:
            self.features = self.features._replace(history=True)
        old = self.field("history")
        capacity = old.shape[0]
        while capacity < self.history_size.max(initial=0):
            capacity *= 2
        if capacity > old.shape[0]:
            new = np.zeros((capacity, self.model.dofs))
            for s in range(max(0, step_count - old.shape[0]), step_count):
                new[s % capacity] = old[s % old.shape[0]]
            host = engine.unpack(np.asarray(self.sim), self.layout)
            self.sim = jnp.asarray(engine.pack(host._replace(history=new), np))
            self.layout = self.layout._replace(history=capacity)
            self.cache.clear()

    def history(self, index: int, step_count: int) -> np.ndarray:
        """The last ``size`` commanded torques of joint ``index``, oldest first (zeros before enabling)."""
        size = int(self.history_size[index])
        if size == 0:
            return np.zeros(0)
        buffer = self.field("history")
        steps = np.arange(step_count - size, step_count)
        valid = steps >= max(self.history_start[index], 0)
        return np.where(valid, buffer[steps % buffer.shape[0], index], 0.0)
