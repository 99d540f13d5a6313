"""``Joint``: ScenarIO's joint (core and Gazebo methods) plus Gazebo's joint queries.

Joints are the moving joints of the model (revolute, continuous, prismatic: one DoF; ball:
three); fixed joints are lumped. A ball joint's DoFs are its rotations about the child frame's
x, y and z axes: its velocities are the child frame's angular velocity [rad/s] relative to the
parent, its forces the torques [N m] about those axes, and its positions the rotation vector
``theta * axis`` [rad] of its quaternion (angle in ``[0, pi]``), as Gazebo's DART ball joint
reports them; a position reset takes that rotation vector, or the unit quaternion (wxyz) itself.
A ball joint is controlled by torques only (``force`` and ``idle`` modes). DoF indices outside
``range(dofs())`` raise DOFIndexError (a DOFMismatch); other failures of the setters return
False. Targets are processed by the joint's controller (see :mod:`.control`) from the next
physics step; resets are applied by the next run. Reads come from the last run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..dynamics import spatial
from ..dynamics.model import JointKind
from ..simulation import control
from . import errors
from .calls import scenario_methods
from .entry import ModelEntry
from .handle import Handle
from .types import PID, JointControlMode, JointLimit, JointType, Limit, Pose, as_tuple

if TYPE_CHECKING:
    from .link import Link
    from .model import Model
    from .world import World


@scenario_methods
class Joint(Handle):
    """A joint of a model (ScenarIO's ``scenario.gazebo.Joint``)."""

    def __init__(self, world: World, entry: ModelEntry, name: str) -> None:
        super().__init__(world, entry)
        self._name = name
        self._dofs = entry.joints[name]
        self._index = self._dofs[0]

    def _scoped(self) -> str:
        return f"{self._model_name}::{self._name}"

    def _dof(self, dof: int) -> int:
        if not 0 <= int(dof) < len(self._dofs):
            raise errors.DOFIndexError(int(dof), self._scoped())
        return self._dofs[int(dof)]

    def _vector(self, data: Any, what: str) -> np.ndarray:
        values = np.asarray(data, dtype=float).reshape(-1)
        if values.size != len(self._dofs):
            raise errors.DOFMismatch(len(self._dofs), values.size, f"{self._scoped()}: {what}")
        return values

    def _is_ball(self) -> bool:
        return len(self._dofs) == 3

    def _state(self, key: str, index: int) -> float:
        values = self._entry.positions() if key == "joint_positions" else self._entry.state(key)
        return float(values[index])

    def _time(self) -> float:
        return self._world.time()

    # ----- ScenarIO's Joint ------------------------------------------------------------

    def dofs(self) -> int:
        """1, and 3 for a ball joint."""
        return len(self._dofs)

    def name(self, scoped: bool = False) -> str:
        """The joint name (``model::joint`` when ``scoped``)."""
        return self._scoped() if scoped else self._name

    def type(self) -> JointType:
        """``revolute`` (also for continuous and screw joints: ScenarIO has no screw type; a
        screw joint's position is its angle), ``prismatic`` or ``ball``."""
        if self._is_ball():
            return JointType.ball
        kind = self._entry.model.joint_type[self._entry.model.joint_link[self._index]]
        return JointType.prismatic if kind == JointKind.PRISMATIC else JointType.revolute

    def control_mode(self) -> JointControlMode:
        return self._entry.mode(self._index)

    def set_control_mode(self, mode: int) -> bool:
        """Switch the control mode: targets become the current state and the PID is reset.

        Every mode but ``invalid`` can be set on a scalar joint; ``velocity_follower_dart`` tracks
        the velocity target exactly in one step (the first switch recompiles the model's step
        once). A ball joint takes ``force`` and ``idle`` only.
        """
        for index in self._dofs:
            self._entry.set_mode(index, mode, self._time())
        return True

    def controller_period(self) -> float:
        """The model's controller period [s] (infinite until set)."""
        return self._entry.period

    def pid(self) -> PID:
        """The PID of the joint (ScenarIO's default ``PID(1, 0.1, 0.01)`` until set)."""
        return PID.from_array(self._entry.table[self._index, control.PID_COLUMNS])

    def set_pid(self, pid: PID) -> bool:
        """Set the PID. Command limits wider than the joint's maximum force are replaced by it."""
        entry = self._entry
        for index in self._dofs:
            values = pid.as_array()
            low, high = entry.table[index, control.EFFORT_MIN], entry.table[index, control.EFFORT_MAX]
            if pid.cmd_min < low or pid.cmd_max > high:
                values[5], values[6] = low, high
            entry.table[index, control.PID_COLUMNS] = values
        entry.touch()
        return True

    def history_of_applied_joint_forces_enabled(self) -> bool:
        return bool(np.all(self._entry.history_size[list(self._dofs)] > 0))

    def enable_history_of_applied_joint_forces(self, enable: bool = True, max_history_size: int = 100) -> bool:
        """Keep (or drop) the last ``max_history_size`` commanded forces; an enabled history keeps its size."""
        self._entry.enable_history(list(self._dofs), bool(enable), int(max_history_size), self._world._step_count)
        return True

    def history_of_applied_joint_forces(self) -> tuple[float, ...]:
        """The commanded forces of the last physics steps, oldest first, one per step (zeros before
        the history was enabled; a ball joint's three per step); empty when disabled."""
        columns = [self._entry.history(index, self._world._step_count) for index in self._dofs]
        return as_tuple(np.stack(columns, axis=1))

    def coulomb_friction(self) -> float:
        """The Coulomb friction [N m or N] of the joint."""
        return float(self._entry.model.joint_friction[self._index])

    def viscous_friction(self) -> float:
        """The viscous friction (damping) [N m s/rad or N s/m] of the joint."""
        return float(self._entry.model.joint_damping[self._index])

    def set_coulomb_friction(self, value: float) -> bool:
        """Set the Coulomb friction (any time, unlike ScenarIO)."""
        entry = self._entry
        friction = np.asarray(entry.model.joint_friction).copy()
        friction[list(self._dofs)] = _non_negative(value, "Coulomb friction")
        entry.set_model(joint_friction=friction)
        self._world._rebuild_params(entry)
        return True

    def set_viscous_friction(self, value: float) -> bool:
        """Set the viscous friction (any time, unlike ScenarIO)."""
        entry = self._entry
        damping = np.asarray(entry.model.joint_damping).copy()
        damping[list(self._dofs)] = _non_negative(value, "viscous friction")
        entry.set_model(joint_damping=damping)
        return True

    def position_limit(self, dof: int = 0) -> Limit:
        index = self._dof(dof)
        model = self._entry.model
        return Limit(float(model.position_limit_lower[index]), float(model.position_limit_upper[index]))

    def joint_position_limit(self) -> JointLimit:
        limits = [self.position_limit(dof) for dof in range(self.dofs())]
        return JointLimit([limit.min for limit in limits], [limit.max for limit in limits])

    def velocity_limit(self, dof: int = 0) -> Limit:
        row = self._entry.table[self._dof(dof)]
        return Limit(float(row[control.VELOCITY_MIN]), float(row[control.VELOCITY_MAX]))

    def joint_velocity_limit(self) -> JointLimit:
        limits = [self.velocity_limit(dof) for dof in range(self.dofs())]
        return JointLimit([limit.min for limit in limits], [limit.max for limit in limits])

    def set_velocity_limit(self, max_velocity: float, dof: int = 0) -> bool:
        """Limit the velocity targets of the controllers to ``[-max_velocity, max_velocity]``."""
        value = _non_negative(max_velocity, "max_velocity")
        self._set_velocity_limit(self._dof(dof), -value, value)
        return True

    def set_joint_velocity_limit(self, max_velocity: Any) -> bool:
        values = self._vector(max_velocity, "max_velocity")
        return all(self.set_velocity_limit(value, dof) for dof, value in enumerate(values))

    def max_generalized_force(self, dof: int = 0) -> float:
        """The maximum force [N m or N] the controllers may apply."""
        return float(self._entry.table[self._dof(dof), control.EFFORT_MAX])

    def joint_max_generalized_force(self) -> tuple[float, ...]:
        return tuple(self.max_generalized_force(dof) for dof in range(self.dofs()))

    def set_max_generalized_force(self, max_force: float, dof: int = 0) -> bool:
        """Clip every command of this DoF to ``[-max_force, max_force]``."""
        value = _non_negative(max_force, "max_force")
        self._set_effort_limit(self._dof(dof), -value, value)
        return True

    def set_joint_max_generalized_force(self, max_force: Any) -> bool:
        values = self._vector(max_force, "max_force")
        return all(self.set_max_generalized_force(value, dof) for dof, value in enumerate(values))

    def position(self, dof: int = 0) -> float:
        """The position [rad or m]; of a ball joint, component ``dof`` of its rotation vector."""
        return self._state("joint_positions", self._dof(dof))

    def velocity(self, dof: int = 0) -> float:
        """The velocity [rad/s or m/s]; of a ball joint, its angular velocity about the child frame's axis ``dof``."""
        return self._state("joint_velocities", self._dof(dof))

    def acceleration(self, dof: int = 0) -> float:
        """The acceleration of the last physics step."""
        return float(self._entry.last()["joint_accelerations"][self._dof(dof)])

    def generalized_force(self, dof: int = 0) -> float:
        """The force acting at the joint in the last physics step: the clipped command plus the
        position-limit, damping and friction forces."""
        return float(self._entry.last()["joint_torques"][self._dof(dof)])

    def joint_position(self) -> tuple[float, ...]:
        return tuple(self.position(dof) for dof in range(self.dofs()))

    def joint_velocity(self) -> tuple[float, ...]:
        return tuple(self.velocity(dof) for dof in range(self.dofs()))

    def joint_acceleration(self) -> tuple[float, ...]:
        return tuple(self.acceleration(dof) for dof in range(self.dofs()))

    def joint_generalized_force(self) -> tuple[float, ...]:
        return tuple(self.generalized_force(dof) for dof in range(self.dofs()))

    def set_position_target(self, position: float, dof: int = 0) -> bool:
        self._entry.set_target("position", self._dof(dof), float(position), self._time())
        return True

    def set_velocity_target(self, velocity: float, dof: int = 0) -> bool:
        self._entry.set_target("velocity", self._dof(dof), float(velocity), self._time())
        return True

    def set_acceleration_target(self, acceleration: float, dof: int = 0) -> bool:
        self._entry.set_target("acceleration", self._dof(dof), float(acceleration), self._time())
        return True

    def set_generalized_force_target(self, force: float, dof: int = 0) -> bool:
        self._entry.set_target("force", self._dof(dof), float(force), self._time())
        return True

    def position_target(self, dof: int = 0) -> float:
        return self._entry.target("position", self._dof(dof))

    def velocity_target(self, dof: int = 0) -> float:
        return self._entry.target("velocity", self._dof(dof))

    def acceleration_target(self, dof: int = 0) -> float:
        return self._entry.target("acceleration", self._dof(dof))

    def generalized_force_target(self, dof: int = 0) -> float:
        return self._entry.target("force", self._dof(dof))

    def _set_targets(self, kind: str, data: Any) -> bool:
        values, time = self._vector(data, kind), self._time()
        for index, value in zip(self._dofs, values):
            self._entry.set_target(kind, index, float(value), time)
        return True

    def set_joint_position_target(self, position: Any) -> bool:
        return self._set_targets("position", position)

    def set_joint_velocity_target(self, velocity: Any) -> bool:
        return self._set_targets("velocity", velocity)

    def set_joint_acceleration_target(self, acceleration: Any) -> bool:
        return self._set_targets("acceleration", acceleration)

    def set_joint_generalized_force_target(self, force: Any) -> bool:
        """The force target [N m or N]; of a ball joint, the torques about the child frame's axes."""
        return self._set_targets("force", force)

    def joint_position_target(self) -> tuple[float, ...]:
        return tuple(self.position_target(dof) for dof in range(self.dofs()))

    def joint_velocity_target(self) -> tuple[float, ...]:
        return tuple(self.velocity_target(dof) for dof in range(self.dofs()))

    def joint_acceleration_target(self) -> tuple[float, ...]:
        return tuple(self.acceleration_target(dof) for dof in range(self.dofs()))

    def joint_generalized_force_target(self) -> tuple[float, ...]:
        return tuple(self.generalized_force_target(dof) for dof in range(self.dofs()))

    def reset_position(self, position: float = 0, dof: int = 0) -> bool:
        """Set the position at the next run (paused or not) and reset the PID; of a ball joint,
        component ``dof`` of its rotation vector (the others kept)."""
        index = self._dof(dof)
        entry = self._entry
        if self._is_ball():
            for other in self._dofs:  # the rotation vector as it is now, then the component changed
                entry.pending["joint_positions"].setdefault(other, float(entry.current_positions()[other]))
        entry.pending["joint_positions"][index] = float(position)
        entry.reset_pid(index)
        return True

    def reset_velocity(self, velocity: float = 0, dof: int = 0) -> bool:
        """Set the velocity at the next run (paused or not) and reset the PID."""
        index = self._dof(dof)
        entry = self._entry
        entry.pending["joint_velocities"][index] = float(velocity)
        entry.reset_pid(index)
        return True

    def reset(self, position: float = 0, velocity: float = 0, dof: int = 0) -> bool:
        return self.reset_position(position, dof) and self.reset_velocity(velocity, dof)

    def reset_joint_position(self, position: Any) -> bool:
        """Set the position at the next run; a ball joint takes its rotation vector (3 values) or
        its unit quaternion (wxyz; normalised, refused more than 1e-6 from unit norm)."""
        values = np.asarray(position, dtype=float).reshape(-1)
        if self._is_ball() and values.size == 4:
            norm = float(np.linalg.norm(values))
            if not abs(norm - 1.0) <= 1e-6:
                raise errors.JointError(f"a ball joint's quaternion must have unit norm, got {values.tolist()} of norm {norm:.9g}", self._scoped())
            values = np.asarray(spatial.quaternion_log(np.asarray(values / norm)))
        values = self._vector(values, "position")
        return all(self.reset_position(value, dof) for dof, value in enumerate(values))

    def reset_joint_velocity(self, velocity: Any) -> bool:
        values = self._vector(velocity, "velocity")
        return all(self.reset_velocity(value, dof) for dof, value in enumerate(values))

    def reset_joint(self, position: Any, velocity: Any) -> bool:
        return self.reset_joint_position(position) and self.reset_joint_velocity(velocity)

    def insert_joint_plugin(self, lib_name: Any, class_name: str = "", context: str = "") -> bool:
        """Add a plugin: a Python callable ``plugin(joint)`` run before every physics step
        (shared-library plugins raise NotImplementedError)."""
        return self._insert_plugin(lib_name, class_name, context)

    # ----- Gazebo's Joint queries ---------------------------------------------------------

    def parent_model(self) -> Model:
        from .model import Model

        return Model(self._world, self._entry)

    def axis(self) -> tuple[float, float, float]:
        """The unit axis of the joint in the child link frame."""
        return as_tuple(np.asarray(self._description().axis, dtype=float) / np.linalg.norm(self._description().axis))

    def parent_link_name(self) -> str:
        """The parent link, as named in the description."""
        return self._description().parent

    def child_link_name(self) -> str:
        """The child link, as named in the description."""
        return self._description().child

    def pose(self) -> Pose:
        """The joint frame in the child link frame: at the axis point, with the child's axes."""
        return Pose(np.asarray(self._description().axis_point, dtype=float))

    def transmitted_wrench(self) -> tuple[float, float, float, float, float, float]:
        """The wrench (force [N], torque [N m]) the joint applied to its child link in the last
        physics step (child link axes, torque about the child link origin)."""
        return as_tuple(self._world._observation(self._entry).joint_wrenches[self._dofs[-1]])

    def set_position_limits(self, limits: Any) -> bool:
        """Set the position limits ``[(lower, upper)]`` (one pair per DoF) used by the physics; a
        ball joint has none (its cone limit comes from the model file)."""
        if self._is_ball():
            raise errors.JointError("a ball joint has no position limits per DoF (its cone limit comes from the model file)", self._scoped())
        (lower, upper), = self._pairs(limits, "position limits")
        entry = self._entry
        low, high = np.asarray(entry.model.position_limit_lower).copy(), np.asarray(entry.model.position_limit_upper).copy()
        low[self._index], high[self._index] = lower, upper
        entry.set_model(position_limit_lower=low, position_limit_upper=high)
        return True

    def set_velocity_limits(self, limits: Any) -> bool:
        """Set the velocity limits ``[(lower, upper)]`` (one pair per DoF) that clip the controllers' velocity targets."""
        for index, (lower, upper) in zip(self._dofs, self._pairs(limits, "velocity limits")):
            self._set_velocity_limit(index, lower, upper)
        return True

    def _set_velocity_limit(self, index: int, lower: float, upper: float) -> None:
        entry = self._entry
        entry.table[index, control.VELOCITY_MIN], entry.table[index, control.VELOCITY_MAX] = lower, upper
        velocity = np.asarray(entry.model.velocity_limit).copy()
        velocity[index] = max(abs(lower), abs(upper))
        entry.set_model(velocity_limit=velocity)
        entry.touch()

    def set_effort_limits(self, limits: Any) -> bool:
        """Set the effort limits ``[(lower, upper)]`` (one pair per DoF) that clip every command of the joint."""
        for index, (lower, upper) in zip(self._dofs, self._pairs(limits, "effort limits")):
            self._set_effort_limit(index, lower, upper)
        return True

    def _set_effort_limit(self, index: int, lower: float, upper: float) -> None:
        entry = self._entry
        entry.table[index, control.EFFORT_MIN], entry.table[index, control.EFFORT_MAX] = lower, upper
        effort = np.asarray(entry.model.effort_limit).copy()
        effort[index] = max(abs(lower), abs(upper))
        entry.set_model(effort_limit=effort)
        entry.touch()

    def set_force(self, forces: Any) -> bool:
        """Gazebo's SetForce: the force target (the joint must be in a mode that accepts one)."""
        return self.set_joint_generalized_force_target(forces)

    def set_velocity(self, velocities: Any) -> bool:
        """Gazebo's SetVelocity: the velocity the joint reaches at the next step. The joint is
        switched to ``velocity_follower_dart`` (exact tracking) if it is in another mode."""
        velocity = self._vector(velocities, "velocities")
        if self.control_mode() != JointControlMode.velocity_follower_dart:
            self.set_control_mode(JointControlMode.velocity_follower_dart)
        return self._set_targets("velocity", velocity)

    def parent_link(self) -> Link:
        """The link moved by this joint's parent side (the body holding the parent link)."""
        from .link import Link

        entry = self._entry
        return Link(self._world, entry, entry.model.parent[entry.model.joint_link[self._dofs[0]]])

    def child_link(self) -> Link:
        """The link this joint moves."""
        from .link import Link

        entry = self._entry
        return Link(self._world, entry, entry.model.joint_link[self._dofs[-1]])

    def _description(self):
        return self._entry.description.joint(self._name)

    def _pairs(self, limits: Any, what: str) -> list[tuple[float, float]]:
        values = np.asarray(limits, dtype=float).reshape(-1)
        if values.size != 2 * len(self._dofs):
            raise errors.DOFMismatch(len(self._dofs), values.size // 2, f"{self._scoped()}: {what} (one (lower, upper) pair per DoF)")
        pairs = [(float(lower), float(upper)) for lower, upper in values.reshape(-1, 2)]
        for lower, upper in pairs:
            if np.isnan([lower, upper]).any() or lower > upper:
                raise errors.JointError(f"{what} need lower <= upper, got ({lower}, {upper})", self._scoped())
        return pairs


def _non_negative(value: float, what: str) -> float:
    value = float(value)
    if not value >= 0:
        raise ValueError(f"{what} must be non-negative, got {value}")
    return value
