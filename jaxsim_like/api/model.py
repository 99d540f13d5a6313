"""``Model``: ScenarIO's model (core and Gazebo methods) and its SRDF.

Joint-vector methods take an optional ``joint_names`` that selects the joints and defines the
serialisation (default: every moving joint, in the description's order), with one value per
DoF: three consecutive ones for a ball joint (see :mod:`.joint`); a vector of the wrong
size makes a setter return False (with a logged error), an unknown name raises JointNotFound.
Getters return tuples of floats. The base is the root link of the model; ``world`` velocities
are mixed (world axes, at the base origin), ``body`` ones in base axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import errors
from .calls import scenario_methods
from .entry import ModelEntry
from .handle import Handle
from .joint import Joint
from .link import Link, link_contacts
from .semantics import Semantics
from .types import Contact, JointControlMode, JointLimit, as_tuple, unit_quaternion, vector

if TYPE_CHECKING:
    from .world import World


def _every(names: Any) -> bool:
    """Whether ``names`` selects every joint (an empty sequence)."""
    return isinstance(names, (tuple, list)) and not names


@scenario_methods
class Model(Semantics, Handle):
    """A model of a world (ScenarIO's ``scenario.gazebo.Model``)."""

    def __init__(self, world: World, entry: ModelEntry) -> None:
        super().__init__(world, entry)

    def _scoped(self) -> str:
        return self._model_name

    # ----- structure ---------------------------------------------------------------------

    def name(self) -> str:
        return self._model_name

    def dofs(self, joint_names: Any = ()) -> int:
        """The number of DoFs of ``joint_names`` (every joint when empty)."""
        return len(self._entry.joint_indices(joint_names))

    def nr_of_links(self) -> int:
        return self._entry.model.number_of_links

    def nr_of_joints(self) -> int:
        """The moving joints (a ball joint is one joint of three DoFs)."""
        return len(self._entry.joints)

    def link_names(self, scoped: bool = False) -> tuple[str, ...]:
        """The links (bodies after lumping fixed joints), ``model::link`` when ``scoped``."""
        names = tuple(self._entry.model.link_names)
        return tuple(f"{self._model_name}::{name}" for name in names) if scoped else names

    def joint_names(self, scoped: bool = False) -> tuple[str, ...]:
        """The moving joints, ``model::joint`` when ``scoped``."""
        names = tuple(self._entry.joints)
        return tuple(f"{self._model_name}::{name}" for name in names) if scoped else names

    def get_link(self, link_name: str) -> Link:
        """The link called ``link_name``; LinkNotFound if there is none."""
        entry = self._entry
        return Link(self._world, entry, entry.link_indices([link_name])[0])

    def get_joint(self, joint_name: str) -> Joint:
        """The joint called ``joint_name``; JointNotFound if there is none."""
        entry = self._entry
        return Joint(self._world, entry, entry.joint_names([joint_name])[0])

    def links(self, link_names: Any = ()) -> tuple[Link, ...]:
        entry = self._entry
        return tuple(Link(self._world, entry, index) for index in entry.link_indices(link_names))

    def joints(self, joint_names: Any = ()) -> tuple[Joint, ...]:
        entry = self._entry
        return tuple(Joint(self._world, entry, name) for name in entry.joint_names(joint_names))

    def total_mass(self, link_names: Any = ()) -> float:
        """The mass [kg] of ``link_names`` (the whole model when empty)."""
        entry = self._entry
        return float(np.sum(np.asarray(entry.model.link_mass)[entry.link_indices(link_names)]))

    def base_frame(self) -> str:
        """The base link: the root of the kinematic tree."""
        return self._entry.model.link_names[0]

    def insert_model_plugin(self, lib_name: Any, class_name: str = "", context: str = "") -> bool:
        """Add a plugin: a Python callable ``plugin(model)`` run before every physics step
        (shared-library plugins raise NotImplementedError)."""
        return self._insert_plugin(lib_name, class_name, context)

    # ----- controllers -------------------------------------------------------------------

    def controller_period(self) -> float:
        """The period [s] of the joint controllers (infinite until set: a PID then computes its
        command once, at the first step after it is reset, and holds it)."""
        return self._entry.period

    def set_controller_period(self, period: float) -> bool:
        """Set the controller period [s]; a period shorter than the physics step means every step."""
        period = float(period)
        if not period > 0:
            raise errors.ModelError(f"the controller period must be positive, got {period}", self._model_name)
        entry = self._entry
        entry.period = period
        entry.touch()
        return True

    def set_joint_control_mode(self, mode: int, joint_names: Any = ()) -> bool:
        """Switch ``joint_names`` (all when empty) to ``mode``; see :meth:`Joint.set_control_mode`
        (nothing is switched when a joint cannot take the mode)."""
        entry = self._entry
        indices = entry.joint_indices(joint_names)
        for index in indices:
            entry.check_mode(index, JointControlMode(int(mode)))
        for index in indices:
            entry.set_mode(index, mode, self._world.time())
        return True

    def enable_history_of_applied_joint_forces(self, enable: bool = True, max_history_size_per_joint: int = 100, joint_names: Any = ()) -> bool:
        """Keep the last ``max_history_size_per_joint`` commanded forces of ``joint_names``."""
        entry = self._entry
        entry.enable_history(entry.joint_indices(joint_names), bool(enable), int(max_history_size_per_joint), self._world._step_count)
        return True

    def history_of_applied_joint_forces_enabled(self, joint_names: Any = ()) -> bool:
        entry = self._entry
        return bool(np.all(entry.history_size[entry.joint_indices(joint_names)] > 0))

    def history_of_applied_joint_forces(self, joint_names: Any = ()) -> tuple[float, ...]:
        """The commanded forces of the last ``H`` physics steps, ``H * dofs`` values ordered by step
        (oldest first), each step in the ``joint_names`` serialisation. The joints' histories
        must be enabled with the same size."""
        entry = self._entry
        indices = entry.joint_indices(joint_names)
        sizes = {int(entry.history_size[i]) for i in indices}
        if 0 in sizes or len(sizes) > 1:
            raise errors.ModelError(
                "the history must be enabled with the same size for every joint considered "
                f"(sizes: {dict(zip([entry.model.joint_names[i] for i in indices], entry.history_size[indices].tolist()))})",
                self._model_name,
            )
        columns = [entry.history(i, self._world._step_count) for i in indices]
        return as_tuple(np.stack(columns, axis=1))

    # ----- joint vectors -----------------------------------------------------------------

    def _read(self, key: str, joint_names: Any) -> tuple[float, ...]:
        entry = self._entry
        values = entry.positions() if key == "joint_positions" else entry.state(key)
        return tuple(values.tolist()) if _every(joint_names) else as_tuple(values[entry.joint_indices(joint_names)])

    def joint_positions(self, joint_names: Any = ()) -> tuple[float, ...]:
        """The positions of every DoF (a ball joint's rotation vector [rad], see :mod:`.joint`)."""
        return self._read("joint_positions", joint_names)

    def joint_velocities(self, joint_names: Any = ()) -> tuple[float, ...]:
        return self._read("joint_velocities", joint_names)

    def joint_accelerations(self, joint_names: Any = ()) -> tuple[float, ...]:
        """The joint accelerations of the last physics step."""
        entry = self._entry
        return as_tuple(entry.last()["joint_accelerations"][entry.joint_indices(joint_names)])

    def joint_generalized_forces(self, joint_names: Any = ()) -> tuple[float, ...]:
        """The forces acting at the joints in the last physics step (see :meth:`Joint.generalized_force`)."""
        entry = self._entry
        return as_tuple(entry.last()["joint_torques"][entry.joint_indices(joint_names)])

    def joint_limits(self, joint_names: Any = ()) -> JointLimit:
        """The position limits of ``joint_names``."""
        entry = self._entry
        indices = entry.joint_indices(joint_names)
        return JointLimit(
            np.asarray(entry.model.position_limit_lower)[indices], np.asarray(entry.model.position_limit_upper)[indices]
        )

    def _set_targets(self, kind: str, values: Any, joint_names: Any) -> bool:
        entry = self._entry
        indices = entry.joint_indices(joint_names)
        data = entry.values(values, len(indices), f"{kind} targets")
        time = self._world.time()
        for index, value in zip(indices, data):
            entry.set_target(kind, index, float(value), time)
        return True

    def _targets(self, kind: str, joint_names: Any) -> tuple[float, ...]:
        entry = self._entry
        return tuple(entry.target(kind, index) for index in entry.joint_indices(joint_names))

    def set_joint_position_targets(self, positions: Any, joint_names: Any = ()) -> bool:
        return self._set_targets("position", positions, joint_names)

    def set_joint_velocity_targets(self, velocities: Any, joint_names: Any = ()) -> bool:
        return self._set_targets("velocity", velocities, joint_names)

    def set_joint_acceleration_targets(self, accelerations: Any, joint_names: Any = ()) -> bool:
        return self._set_targets("acceleration", accelerations, joint_names)

    def set_joint_generalized_force_targets(self, forces: Any, joint_names: Any = ()) -> bool:
        return self._set_targets("force", forces, joint_names)

    def joint_position_targets(self, joint_names: Any = ()) -> tuple[float, ...]:
        return self._targets("position", joint_names)

    def joint_velocity_targets(self, joint_names: Any = ()) -> tuple[float, ...]:
        return self._targets("velocity", joint_names)

    def joint_acceleration_targets(self, joint_names: Any = ()) -> tuple[float, ...]:
        return self._targets("acceleration", joint_names)

    def joint_generalized_force_targets(self, joint_names: Any = ()) -> tuple[float, ...]:
        return self._targets("force", joint_names)

    def reset_joint_positions(self, positions: Any, joint_names: Any = ()) -> bool:
        """Set joint positions at the next run (paused or not), one per DoF (a ball joint's
        rotation vector [rad]); their PIDs are reset."""
        return self._reset_joints("joint_positions", positions, joint_names)

    def reset_joint_velocities(self, velocities: Any, joint_names: Any = ()) -> bool:
        """Set joint velocities at the next run (paused or not); their PIDs are reset."""
        return self._reset_joints("joint_velocities", velocities, joint_names)

    def _reset_joints(self, key: str, values: Any, joint_names: Any) -> bool:
        entry = self._entry
        indices = entry.joint_indices(joint_names)
        data = entry.values(values, len(indices), key)
        for index, value in zip(indices, data):
            entry.pending[key][index] = float(value)
            entry.reset_pid(index)
        return True

    # ----- base ----------------------------------------------------------------------------

    def base_position(self) -> tuple[float, float, float]:
        """The position [m] of the base link in the world."""
        return as_tuple(self._entry.state("base_position"))

    def base_orientation(self) -> tuple[float, float, float, float]:
        """The wxyz quaternion of the base link in the world."""
        return as_tuple(self._entry.state("base_quaternion"))

    def base_world_linear_velocity(self) -> tuple[float, float, float]:
        """The velocity [m/s] of the base origin, world axes."""
        return as_tuple(self._entry.state("base_velocity")[:3])

    def base_world_angular_velocity(self) -> tuple[float, float, float]:
        """The angular velocity [rad/s] of the base, world axes."""
        return as_tuple(self._entry.state("base_velocity")[3:])

    def _base_rotation(self) -> np.ndarray:
        from .types import Pose

        entry = self._entry
        return Pose(entry.state("base_position"), entry.state("base_quaternion")).transform[:3, :3]

    def base_body_linear_velocity(self) -> tuple[float, float, float]:
        """The velocity [m/s] of the base origin, base axes."""
        return as_tuple(self._base_rotation().T @ self._entry.state("base_velocity")[:3])

    def base_body_angular_velocity(self) -> tuple[float, float, float]:
        """The angular velocity [rad/s] of the base, base axes."""
        return as_tuple(self._base_rotation().T @ self._entry.state("base_velocity")[3:])

    def reset_base_pose(self, position: Any = (0.0, 0.0, 0.0), orientation: Any = (1.0, 0.0, 0.0, 0.0)) -> bool:
        """Move the base link to ``position`` and wxyz ``orientation`` at the next run (paused or not)."""
        entry = self._entry
        entry.pending["base_position"] = vector(position, 3, "position")
        entry.pending["base_quaternion"] = unit_quaternion(orientation)
        return True

    def reset_base_position(self, position: Any = (0.0, 0.0, 0.0)) -> bool:
        entry = self._entry
        entry.pending["base_position"] = vector(position, 3, "position")
        return True

    def reset_base_orientation(self, orientation: Any = (1.0, 0.0, 0.0, 0.0)) -> bool:
        entry = self._entry
        entry.pending["base_quaternion"] = unit_quaternion(orientation)
        return True

    def reset_base_world_linear_velocity(self, linear: Any = (0.0, 0.0, 0.0)) -> bool:
        """Set the base origin's velocity [m/s] (world axes) at the next run."""
        return self._reset_base_velocity(linear=vector(linear, 3, "linear"))

    def reset_base_world_angular_velocity(self, angular: Any = (0.0, 0.0, 0.0)) -> bool:
        """Set the base angular velocity [rad/s] (world axes) at the next run."""
        return self._reset_base_velocity(angular=vector(angular, 3, "angular"))

    def reset_base_world_velocity(self, linear: Any = (0.0, 0.0, 0.0), angular: Any = (0.0, 0.0, 0.0)) -> bool:
        return self._reset_base_velocity(linear=vector(linear, 3, "linear"), angular=vector(angular, 3, "angular"))

    def _reset_base_velocity(self, linear: np.ndarray | None = None, angular: np.ndarray | None = None) -> bool:
        entry = self._entry
        if not entry.model.floating_base:
            raise errors.ModelError("a fixed-base model has no base velocity to reset", self._model_name)
        velocity = entry.pending.get("base_velocity", entry.state("base_velocity")).copy()
        if linear is not None:
            velocity[:3] = linear
        if angular is not None:
            velocity[3:] = angular
        entry.pending["base_velocity"] = velocity
        return True

    def _set_base_target(self, key: str, value: np.ndarray) -> bool:
        self._entry.base_targets[key] = value
        return True

    def _base_target(self, key: str) -> tuple[float, ...]:
        try:
            return as_tuple(self._entry.base_targets[key])
        except KeyError:
            raise errors.ModelError(f"no base {key.replace('_', ' ')} target was set", self._model_name) from None

    def set_base_pose_target(self, position: Any, orientation: Any) -> bool:
        """Store a base pose target (for custom controllers; the physics does not use it)."""
        return self._set_base_target("position", vector(position, 3, "position")) and self._set_base_target(
            "orientation", vector(orientation, 4, "orientation")
        )

    def set_base_position_target(self, position: Any) -> bool:
        return self._set_base_target("position", vector(position, 3, "position"))

    def set_base_orientation_target(self, orientation: Any) -> bool:
        return self._set_base_target("orientation", vector(orientation, 4, "orientation"))

    def set_base_world_velocity_target(self, linear: Any, angular: Any) -> bool:
        return self.set_base_world_linear_velocity_target(linear) and self.set_base_world_angular_velocity_target(angular)

    def set_base_world_linear_velocity_target(self, linear: Any) -> bool:
        return self._set_base_target("linear_velocity", vector(linear, 3, "linear"))

    def set_base_world_angular_velocity_target(self, angular: Any) -> bool:
        return self._set_base_target("angular_velocity", vector(angular, 3, "angular"))

    def set_base_world_linear_acceleration_target(self, linear: Any) -> bool:
        return self._set_base_target("linear_acceleration", vector(linear, 3, "linear"))

    def set_base_world_angular_acceleration_target(self, angular: Any) -> bool:
        return self._set_base_target("angular_acceleration", vector(angular, 3, "angular"))

    def base_position_target(self) -> tuple[float, ...]:
        return self._base_target("position")

    def base_orientation_target(self) -> tuple[float, ...]:
        return self._base_target("orientation")

    def base_world_linear_velocity_target(self) -> tuple[float, ...]:
        return self._base_target("linear_velocity")

    def base_world_angular_velocity_target(self) -> tuple[float, ...]:
        return self._base_target("angular_velocity")

    def base_world_linear_acceleration_target(self) -> tuple[float, ...]:
        return self._base_target("linear_acceleration")

    def base_world_angular_acceleration_target(self) -> tuple[float, ...]:
        return self._base_target("angular_acceleration")

    # ----- mocap bodies (not in ScenarIO) --------------------------------------------------

    def mocap_body_names(self) -> tuple[str, ...]:
        """The mocap bodies (MJCF ``mocap="true"``) that the model's loop closures hold on."""
        return self._entry.model.loops.mocap_names

    def _mocap_index(self, name: str) -> int:
        names = self.mocap_body_names()
        if name not in names:
            raise ValueError(f"model '{self._model_name}' holds on no mocap body {name!r} (it holds on {list(names)})")
        return names.index(name)

    def mocap_pose(self, name: str) -> tuple[float, ...]:
        """The position [m] and wxyz quaternion (7 floats, world frame) of the mocap body ``name``."""
        loops, k = self._entry.model.loops, self._mocap_index(name)
        return as_tuple(np.concatenate([np.asarray(loops.mocap_position[k]), np.asarray(loops.mocap_quaternion[k])]))

    def set_mocap_pose(self, name: str, position: Any, orientation: Any = (1.0, 0.0, 0.0, 0.0)) -> bool:
        """Move the mocap body ``name`` to ``position`` [m] and wxyz ``orientation`` (world frame)
        for the next runs (MuJoCo's ``mocap_pos`` and ``mocap_quat``; no recompilation): the
        closures that hold on it pull their links there."""
        entry = self._entry
        loops, k = entry.model.loops, self._mocap_index(name)
        positions = np.array(loops.mocap_position)
        quaternions = np.array(loops.mocap_quaternion)
        positions[k], quaternions[k] = vector(position, 3, "position"), unit_quaternion(orientation)
        entry.model = entry.model.replace(loops=loops.posed(positions, quaternions))
        entry.cache.clear()
        return True

    # ----- contacts ------------------------------------------------------------------------

    def contacts_enabled(self) -> bool:
        """Whether the contacts of every link are reported (off by default, as in ScenarIO)."""
        return bool(np.all(self._entry.contacts_enabled))

    def enable_contacts(self, enable: bool = True) -> bool:
        """Report (or stop reporting) the contacts of every link; they are always simulated."""
        self._entry.contacts_enabled[:] = bool(enable)
        return True

    def self_collisions_enabled(self) -> bool:
        """Whether the links of the model collide with each other (off by default, as in ScenarIO)."""
        return self._entry.self_collision

    def enable_self_collisions(self, enable: bool = True) -> bool:
        """Make the links of the model collide with each other (their shapes and collidable
        points, as links of different models do), except parent and child and the pairs the
        model's SRDF disables (see :mod:`jaxsim_like.simulation.collision`); from the next run
        (one recompilation). Self-contacts are reported by :meth:`contacts`."""
        self._entry.self_collision = bool(enable)
        return True

    def links_in_contact(self) -> tuple[str, ...]:
        """The links with reported contacts in the last step."""
        entry = self._entry
        links = range(entry.model.number_of_links)
        return tuple(entry.model.link_names[i] for i in links if link_contacts(self._world, entry, i))

    def contacts(self, link_names: Any = ()) -> tuple[Contact, ...]:
        """The reported contacts of ``link_names`` (every link when empty) in the last step."""
        entry = self._entry
        return tuple(contact for i in entry.link_indices(link_names) for contact in link_contacts(self._world, entry, i))
