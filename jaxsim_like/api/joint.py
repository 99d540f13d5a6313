"""``Joint``: ScenarIO's joint (core and Gazebo methods) plus Gazebo's joint queries.

Joints are the moving joints of the model (revolute, continuous, prismatic: one DoF each);
fixed joints are lumped. DoF indices other than 0 raise DOFIndexError (a DOFMismatch); other
failures of the setters return False. Targets are processed by the joint's controller (see
:mod:`.control`) from the next physics step; resets are applied by the next run. Reads come
from the last run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

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

    def __init__(self, world: World, entry: ModelEntry, index: int) -> None:
        super().__init__(world, entry)
        self._index = index
        self._name = entry.model.joint_names[index]

    def _scoped(self) -> str:
        return f"{self._model_name}::{self._name}"

    def _dof(self, dof: int) -> int:
        if int(dof) != 0:
            raise errors.DOFIndexError(int(dof), self._scoped())
        return self._index

    def _vector(self, data: Any, what: str) -> float:
        values = np.asarray(data, dtype=float).reshape(-1)
        if values.size != 1:
            raise errors.DOFMismatch(1, values.size, f"{self._scoped()}: {what}")
        return float(values[0])

    def _state(self, key: str) -> float:
        return float(self._entry.state(key)[self._index])

    def _time(self) -> float:
        return self._world.time()

    # ----- ScenarIO's Joint ------------------------------------------------------------

    def dofs(self) -> int:
        """1: every moving joint has one DoF."""
        return 1

    def name(self, scoped: bool = False) -> str:
        """The joint name (``model::joint`` when ``scoped``)."""
        return self._scoped() if scoped else self._name

    def type(self) -> JointType:
        """``revolute`` (also for continuous joints) or ``prismatic``."""
        kind = self._entry.model.joint_type[self._entry.model.joint_link[self._index]]
        return JointType.prismatic if kind == JointKind.PRISMATIC else JointType.revolute

    def control_mode(self) -> JointControlMode:
        return self._entry.mode(self._index)

    def set_control_mode(self, mode: int) -> bool:
        """Switch the control mode: targets become the current state and the PID is reset.

        Every mode but ``invalid`` can be set; ``velocity_follower_dart`` tracks the velocity
        target exactly in one step (the first switch recompiles the model's step once).
        """
        self._entry.set_mode(self._index, mode, self._time())
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
        values = pid.as_array()
        low, high = entry.table[self._index, control.EFFORT_MIN], entry.table[self._index, control.EFFORT_MAX]
        if pid.cmd_min < low or pid.cmd_max > high:
            values[5], values[6] = low, high
        entry.table[self._index, control.PID_COLUMNS] = values
        entry.touch()
        return True

    def history_of_applied_joint_forces_enabled(self) -> bool:
        return bool(self._entry.history_size[self._index] > 0)

    def enable_history_of_applied_joint_forces(self, enable: bool = True, max_history_size: int = 100) -> bool:
        """Keep (or drop) the last ``max_history_size`` commanded forces; an enabled history keeps its size."""
        self._entry.enable_history([self._index], bool(enable), int(max_history_size), self._world._step_count)
        return True

    def history_of_applied_joint_forces(self) -> tuple[float, ...]:
        """The commanded forces of the last physics steps, oldest first, one per step (zeros before
        the history was enabled); empty when disabled."""
        return as_tuple(self._entry.history(self._index, self._world._step_count))

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
        friction[self._index] = _non_negative(value, "Coulomb friction")
        entry.set_model(joint_friction=friction)
        self._world._rebuild_params(entry)
        return True

    def set_viscous_friction(self, value: float) -> bool:
        """Set the viscous friction (any time, unlike ScenarIO)."""
        entry = self._entry
        damping = np.asarray(entry.model.joint_damping).copy()
        damping[self._index] = _non_negative(value, "viscous friction")
        entry.set_model(joint_damping=damping)
        return True

    def position_limit(self, dof: int = 0) -> Limit:
        index = self._dof(dof)
        model = self._entry.model
        return Limit(float(model.position_limit_lower[index]), float(model.position_limit_upper[index]))

    def joint_position_limit(self) -> JointLimit:
        limit = self.position_limit()
        return JointLimit([limit.min], [limit.max])

    def velocity_limit(self, dof: int = 0) -> Limit:
        row = self._entry.table[self._dof(dof)]
        return Limit(float(row[control.VELOCITY_MIN]), float(row[control.VELOCITY_MAX]))

    def joint_velocity_limit(self) -> JointLimit:
        limit = self.velocity_limit()
        return JointLimit([limit.min], [limit.max])

    def set_velocity_limit(self, max_velocity: float, dof: int = 0) -> bool:
        """Limit the velocity targets of the controllers to ``[-max_velocity, max_velocity]``."""
        self._dof(dof)
        value = _non_negative(max_velocity, "max_velocity")
        return self.set_velocity_limits([(-value, value)])

    def set_joint_velocity_limit(self, max_velocity: Any) -> bool:
        return self.set_velocity_limit(self._vector(max_velocity, "max_velocity"))

    def max_generalized_force(self, dof: int = 0) -> float:
        """The maximum force [N m or N] the controllers may apply."""
        return float(self._entry.table[self._dof(dof), control.EFFORT_MAX])

    def joint_max_generalized_force(self) -> tuple[float]:
        return (self.max_generalized_force(),)

    def set_max_generalized_force(self, max_force: float, dof: int = 0) -> bool:
        """Clip every command of this joint to ``[-max_force, max_force]``."""
        self._dof(dof)
        value = _non_negative(max_force, "max_force")
        return self.set_effort_limits([(-value, value)])

    def set_joint_max_generalized_force(self, max_force: Any) -> bool:
        return self.set_max_generalized_force(self._vector(max_force, "max_force"))

    def position(self, dof: int = 0) -> float:
        return self._state_at("joint_positions", dof)

    def velocity(self, dof: int = 0) -> float:
        return self._state_at("joint_velocities", dof)

    def acceleration(self, dof: int = 0) -> float:
        """The acceleration of the last physics step."""
        return float(self._entry.last()["joint_accelerations"][self._dof(dof)])

    def generalized_force(self, dof: int = 0) -> float:
        """The force acting at the joint in the last physics step: the clipped command plus the
        position-limit, damping and friction forces."""
        return float(self._entry.last()["joint_torques"][self._dof(dof)])

    def _state_at(self, key: str, dof: int) -> float:
        self._dof(dof)
        return self._state(key)

    def joint_position(self) -> tuple[float]:
        return (self.position(),)

    def joint_velocity(self) -> tuple[float]:
        return (self.velocity(),)

    def joint_acceleration(self) -> tuple[float]:
        return (self.acceleration(),)

    def joint_generalized_force(self) -> tuple[float]:
        return (self.generalized_force(),)

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

    def set_joint_position_target(self, position: Any) -> bool:
        return self.set_position_target(self._vector(position, "position"))

    def set_joint_velocity_target(self, velocity: Any) -> bool:
        return self.set_velocity_target(self._vector(velocity, "velocity"))

    def set_joint_acceleration_target(self, acceleration: Any) -> bool:
        return self.set_acceleration_target(self._vector(acceleration, "acceleration"))

    def set_joint_generalized_force_target(self, force: Any) -> bool:
        return self.set_generalized_force_target(self._vector(force, "force"))

    def joint_position_target(self) -> tuple[float]:
        return (self.position_target(),)

    def joint_velocity_target(self) -> tuple[float]:
        return (self.velocity_target(),)

    def joint_acceleration_target(self) -> tuple[float]:
        return (self.acceleration_target(),)

    def joint_generalized_force_target(self) -> tuple[float]:
        return (self.generalized_force_target(),)

    def reset_position(self, position: float = 0, dof: int = 0) -> bool:
        """Set the position at the next run (paused or not) and reset the PID."""
        index = self._dof(dof)
        entry = self._entry
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
        return self.reset_position(self._vector(position, "position"))

    def reset_joint_velocity(self, velocity: Any) -> bool:
        return self.reset_velocity(self._vector(velocity, "velocity"))

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
        return as_tuple(self._world._observation(self._entry).joint_wrenches[self._index])

    def set_position_limits(self, limits: Any) -> bool:
        """Set the position limits ``[(lower, upper)]`` (one pair per DoF) used by the physics."""
        lower, upper = self._pair(limits, "position limits")
        entry = self._entry
        low, high = np.asarray(entry.model.position_limit_lower).copy(), np.asarray(entry.model.position_limit_upper).copy()
        low[self._index], high[self._index] = lower, upper
        entry.set_model(position_limit_lower=low, position_limit_upper=high)
        return True

    def set_velocity_limits(self, limits: Any) -> bool:
        """Set the velocity limits ``[(lower, upper)]`` that clip the controllers' velocity targets."""
        lower, upper = self._pair(limits, "velocity limits")
        entry = self._entry
        entry.table[self._index, control.VELOCITY_MIN], entry.table[self._index, control.VELOCITY_MAX] = lower, upper
        velocity = np.asarray(entry.model.velocity_limit).copy()
        velocity[self._index] = max(abs(lower), abs(upper))
        entry.set_model(velocity_limit=velocity)
        entry.touch()
        return True

    def set_effort_limits(self, limits: Any) -> bool:
        """Set the effort limits ``[(lower, upper)]`` that clip every command of the joint."""
        lower, upper = self._pair(limits, "effort limits")
        entry = self._entry
        entry.table[self._index, control.EFFORT_MIN], entry.table[self._index, control.EFFORT_MAX] = lower, upper
        effort = np.asarray(entry.model.effort_limit).copy()
        effort[self._index] = max(abs(lower), abs(upper))
        entry.set_model(effort_limit=effort)
        entry.touch()
        return True

    def set_force(self, forces: Any) -> bool:
        """Gazebo's SetForce: the force target (the joint must be in a mode that accepts one)."""
        return self.set_joint_generalized_force_target(forces)

    def set_velocity(self, velocities: Any) -> bool:
        """Gazebo's SetVelocity: the velocity the joint reaches at the next step. The joint is
        switched to ``velocity_follower_dart`` (exact tracking) if it is in another mode."""
        velocity = self._vector(velocities, "velocities")
        if self.control_mode() != JointControlMode.velocity_follower_dart:
            self.set_control_mode(JointControlMode.velocity_follower_dart)
        return self.set_velocity_target(velocity)

    def parent_link(self) -> Link:
        """The link moved by this joint's parent side (the body holding the parent link)."""
        from .link import Link

        entry = self._entry
        return Link(self._world, entry, entry.model.parent[entry.model.joint_link[self._index]])

    def child_link(self) -> Link:
        """The link this joint moves."""
        from .link import Link

        entry = self._entry
        return Link(self._world, entry, entry.model.joint_link[self._index])

    def _description(self):
        return self._entry.description.joint(self._name)

    def _pair(self, limits: Any, what: str) -> tuple[float, float]:
        values = np.asarray(limits, dtype=float).reshape(-1)
        if values.size != 2:
            raise errors.DOFMismatch(1, values.size // 2, f"{self._scoped()}: {what} (one (lower, upper) pair per DoF)")
        lower, upper = float(values[0]), float(values[1])
        if np.isnan([lower, upper]).any() or lower > upper:
            raise errors.JointError(f"{what} need lower <= upper, got ({lower}, {upper})", self._scoped())
        return lower, upper


def _non_negative(value: float, what: str) -> float:
    value = float(value)
    if not value >= 0:
        raise ValueError(f"{what} must be non-negative, got {value}")
    return value
