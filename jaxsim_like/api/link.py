"""``Link``: ScenarIO's link (core and Gazebo methods) plus Gazebo Sim's link queries.

Links are the bodies of the model after fixed joints are lumped (a link welded to its parent by
a fixed joint is part of the parent's body). Velocities and accelerations are ScenarIO's:
``world_*`` is the mixed representation (world axes, at the link origin), ``body_*`` the body
one. Accelerations, contacts and applied forces are those of the last physics step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import errors, scenery
from .entry import ModelEntry
from .calls import scenario_methods
from .handle import Handle
from .types import Contact, ContactPoint, Pose, as_tuple, rotation_to_quaternion, vector

if TYPE_CHECKING:
    from .model import Model
    from .world import World


def link_contacts(world: World, entry: ModelEntry, link: int) -> tuple[Contact, ...]:
    """The contacts of link ``link`` (empty when its contact detection is off): one per body it
    touches (the ground, a static box, a link of another model or of its own), with every
    touching point, its normal pointing into this link and the force on it. The points are point
    contacts: their torque is zero, and :meth:`Link.contact_wrench` adds the lever arms."""
    if not entry.contacts_enabled[link]:
        return ()
    last = entry.last()
    touching = np.flatnonzero((np.asarray(entry.model.point_link) == link) & last["in_contact"])
    points: dict[str, list[ContactPoint]] = {}
    if touching.size:
        ground = world._terrain_names[0]  # the points meet the ground; the static boxes are met through the pairs
        for point in touching:
            points.setdefault(ground, []).append(
                ContactPoint(
                    depth=last["penetration"][point],
                    force=last["contact_forces"][point],
                    normal=last["contact_normals"][point],
                    position=last["contact_positions"][point],
                )
            )
    for other, point in world._link_pair_contacts(entry, link):
        points.setdefault(other, []).append(point)
    body_a = f"{entry.name}::{entry.model.link_names[link]}"
    return tuple(Contact(body_a=body_a, body_b=name, points=found) for name, found in points.items())


@scenario_methods
class Link(Handle):
    """A link of a model (ScenarIO's ``scenario.gazebo.Link``)."""

    def __init__(self, world: World, entry: ModelEntry, index: int) -> None:
        super().__init__(world, entry)
        self._index = index
        self._name = entry.model.link_names[index]

    def _scoped(self) -> str:
        return f"{self._model_name}::{self._name}"

    def _observation(self):
        return self._world._observation(self._entry)

    def _pose(self) -> np.ndarray:
        return self._observation().W_H_L[self._index]

    # ----- ScenarIO's Link -------------------------------------------------------------

    def name(self, scoped: bool = False) -> str:
        """The link name (``model::link`` when ``scoped``)."""
        return self._scoped() if scoped else self._name

    def mass(self) -> float:
        """The mass [kg] of the link (with the links lumped into it)."""
        return float(self._entry.model.link_mass[self._index])

    def position(self) -> tuple[float, float, float]:
        """The position [m] of the link frame in the world."""
        return as_tuple(self._pose()[:3, 3])

    def orientation(self) -> tuple[float, float, float, float]:
        """The wxyz quaternion of the link frame in the world."""
        return as_tuple(rotation_to_quaternion(self._pose()[:3, :3]))

    def world_linear_velocity(self, offset: Any = None) -> tuple[float, float, float]:
        """The velocity [m/s] of the link origin in world axes (the linear mixed velocity); with
        ``offset`` (link frame, as Gazebo's WorldLinearVelocity), of that point of the link."""
        velocity = self._observation().mixed_velocity[self._index]
        if offset is None:
            return as_tuple(velocity[:3])
        arm = self._pose()[:3, :3] @ vector(offset, 3, "offset")
        return as_tuple(velocity[:3] + np.cross(velocity[3:], arm))

    def world_angular_velocity(self) -> tuple[float, float, float]:
        """The angular velocity [rad/s] in world axes."""
        return as_tuple(self._observation().mixed_velocity[self._index, 3:])

    def body_linear_velocity(self) -> tuple[float, float, float]:
        """The velocity [m/s] of the link origin in link axes."""
        return as_tuple(self._observation().body_velocity[self._index, :3])

    def body_angular_velocity(self) -> tuple[float, float, float]:
        """The angular velocity [rad/s] in link axes."""
        return as_tuple(self._observation().body_velocity[self._index, 3:])

    def world_linear_acceleration(self) -> tuple[float, float, float]:
        """The acceleration [m/s^2] of the link origin in world axes (the linear mixed
        acceleration, the derivative of :meth:`world_linear_velocity`) in the last physics step."""
        return as_tuple(self._observation().mixed_acceleration[self._index, :3])

    def world_angular_acceleration(self) -> tuple[float, float, float]:
        """The angular acceleration [rad/s^2] in world axes in the last physics step."""
        return as_tuple(self._observation().mixed_acceleration[self._index, 3:])

    def body_linear_acceleration(self) -> tuple[float, float, float]:
        """:meth:`world_linear_acceleration` in link axes, ``W_R_L^T a`` with the link's current
        orientation (the one :meth:`world_pose` reads), as Gazebo defines it; not the derivative of
        :meth:`body_linear_velocity`, which differs by ``w x v``."""
        return as_tuple(self._observation().body_acceleration[self._index, :3])

    def body_angular_acceleration(self) -> tuple[float, float, float]:
        """:meth:`world_angular_acceleration` in link axes, ``W_R_L^T dw/dt`` with the link's
        current orientation."""
        return as_tuple(self._observation().body_acceleration[self._index, 3:])

    def contacts_enabled(self) -> bool:
        """Whether contacts of this link are reported (physics always has them)."""
        return bool(self._entry.contacts_enabled[self._index])

    def enable_contact_detection(self, enable: bool) -> bool:
        """Report (or stop reporting) the contacts of this link; they are always simulated."""
        self._entry.contacts_enabled[self._index] = bool(enable)
        return True

    def in_contact(self) -> bool:
        """Whether contact detection is on and the link touched something in the last step."""
        return bool(link_contacts(self._world, self._entry, self._index))

    def contacts(self) -> tuple[Contact, ...]:
        """The contacts of the last step (empty when contact detection is off)."""
        return link_contacts(self._world, self._entry, self._index)

    def contact_wrench(self) -> tuple[float, float, float, float, float, float]:
        """The contact wrench ``(force, torque)``: the contact forces of the last step composed
        into an equivalent wrench at the origin of the link frame, world axes (each point's
        torque plus the moment of its force about the origin)."""
        origin = self._observation().step_origins[self._index]  # where the link was when they acted
        total = np.zeros(6)
        for contact in self.contacts():
            for point in contact.points:
                force = np.asarray(point.force)
                total[:3] += force
                total[3:] += np.asarray(point.torque) + np.cross(np.asarray(point.position) - origin, force)
        return as_tuple(total)

    def apply_world_force(self, force: Any, duration: float = 0.0) -> bool:
        """Apply ``force (3,)`` [N] (world axes) at the link origin for ``duration`` seconds of
        simulated time (one physics step when 0)."""
        return self.apply_world_wrench(force, np.zeros(3), duration)

    def apply_world_torque(self, torque: Any, duration: float = 0.0) -> bool:
        """Apply ``torque (3,)`` [N m] (world axes) for ``duration`` seconds (one step when 0)."""
        return self.apply_world_wrench(np.zeros(3), torque, duration)

    def apply_world_wrench(self, force: Any, torque: Any, duration: float = 0.0) -> bool:
        """Apply a wrench (world axes) at the link origin for ``duration`` seconds (one step when 0)."""
        return self._add_wrench(force, torque, np.zeros(3), duration)

    def apply_world_wrench_to_co_m(self, force: Any, torque: Any, duration: float = 0.0) -> bool:
        """Apply a wrench (world axes) at the link's centre of mass for ``duration`` seconds."""
        com = np.asarray(self._entry.model.link_com[self._index], dtype=float)
        return self._add_wrench(force, torque, com, duration)

    def insert_link_plugin(self, lib_name: Any, class_name: str = "", context: str = "") -> bool:
        """Add a plugin: a Python callable ``plugin(link)`` run before every physics step
        (shared-library plugins raise NotImplementedError)."""
        return self._insert_plugin(lib_name, class_name, context)

    def _add_wrench(self, force: Any, torque: Any, point: np.ndarray, duration: float) -> bool:
        entry = self._entry
        if entry.static:
            raise errors.LinkError("wrenches cannot be applied to a static model", self._scoped())
        wrench = np.concatenate([vector(force, 3, "force"), vector(torque, 3, "torque")])
        entry.add_wrench(self._index, wrench, point, self._world._physics_steps(float(duration)))
        return True

    # ----- Gazebo Sim's Link queries ----------------------------------------------------

    def parent_model(self) -> Model:
        """The model of this link."""
        from .model import Model

        return Model(self._world, self._entry)

    def is_canonical(self) -> bool:
        """Whether this is the base (canonical) link of the model."""
        return self._index == 0

    def world_pose(self) -> Pose:
        """The pose of the link frame in the world."""
        return Pose.from_transform(self._pose())

    def world_inertial_pose(self) -> Pose:
        """The pose of the centre of mass, with the link's axes (the inertia is kept in link axes)."""
        H = self._pose().copy()
        H[:3, 3] = H[:3, :3] @ np.asarray(self._entry.model.link_com[self._index]) + H[:3, 3]
        return Pose.from_transform(H)

    def world_inertia_matrix(self) -> np.ndarray:
        """``(3, 3)`` [kg m^2] rotational inertia about the centre of mass, world axes."""
        R = self._pose()[:3, :3]
        return R @ np.asarray(self._entry.model.link_inertia[self._index]) @ R.T

    def world_kinetic_energy(self) -> float:
        """Translational plus rotational kinetic energy [J] of the link in the world frame."""
        com_velocity = np.asarray(self.world_linear_velocity(offset=np.asarray(self._entry.model.link_com[self._index])))
        omega = np.asarray(self.world_angular_velocity())
        return float(0.5 * self.mass() * com_velocity @ com_velocity + 0.5 * omega @ self.world_inertia_matrix() @ omega)

    def axis_aligned_box(self) -> scenery.AxisAlignedBox | None:
        """The box bounding the link's collision shapes, in the link frame (None without shapes)."""
        entry = self._entry
        if "collisions" not in entry.cache:
            entry.cache["collisions"] = scenery.body_collisions(entry.description, entry.model)
        return scenery.bounding_box(entry.cache["collisions"][self._index])

    def world_axis_aligned_box(self) -> scenery.AxisAlignedBox | None:
        """The world-axes box bounding :meth:`axis_aligned_box` at the link's current pose."""
        box = self.axis_aligned_box()
        return None if box is None else box.transformed(self._pose())

    def add_world_force(self, force: Any, position: Any = None) -> bool:
        """Gazebo's AddWorldForce: ``force (3,)`` (world axes) for one step, at the centre of mass,
        or at ``position`` (link axes) from the centre of mass."""
        com = np.asarray(self._entry.model.link_com[self._index], dtype=float)
        offset = np.zeros(3) if position is None else vector(position, 3, "position")
        return self._add_wrench(force, np.zeros(3), com + offset, 0.0)

    def add_world_wrench(self, force: Any, torque: Any, offset: Any = None) -> bool:
        """Gazebo's AddWorldWrench: a wrench (world axes) for one step at the link origin, or at
        ``offset`` (link frame) from it."""
        point = np.zeros(3) if offset is None else vector(offset, 3, "offset")
        return self._add_wrench(force, torque, point, 0.0)

    def set_linear_velocity(self, velocity: Any) -> bool:
        """Gazebo's SetLinearVelocity: make the link origin move at ``velocity (3,)`` [m/s] (link
        axes) by changing the base velocity of a floating-base model at the next run (a reset:
        joint velocities are kept)."""
        return self._set_velocity(linear=vector(velocity, 3, "velocity"))

    def set_angular_velocity(self, velocity: Any) -> bool:
        """Gazebo's SetAngularVelocity: make the link rotate at ``velocity (3,)`` [rad/s] (link axes),
        about its origin, by changing the base velocity of a floating-base model (a reset)."""
        return self._set_velocity(angular=vector(velocity, 3, "velocity"))

    def _set_velocity(self, linear: np.ndarray | None = None, angular: np.ndarray | None = None) -> bool:
        entry = self._entry
        if not entry.model.floating_base:
            raise errors.LinkError(
                f"setting a link velocity changes the base velocity, and model '{entry.name}' has a fixed base",
                self._scoped(),
            )
        # Shifting the base velocity by (dv, dw) with the joint velocities kept moves every link
        # rigidly: its angular velocity changes by dw, its origin's velocity by dv + dw x (p_L - p_B).
        observation = self._observation()
        W_H_L = observation.W_H_L[self._index]
        arm = W_H_L[:3, 3] - observation.W_H_L[0, :3, 3]
        state_base = entry.state("base_velocity")
        base = entry.pending.get("base_velocity", state_base).copy()
        shift = base - state_base
        v_link = observation.mixed_velocity[self._index] + np.concatenate([shift[:3] + np.cross(shift[3:], arm), shift[3:]])
        if angular is not None:
            delta = W_H_L[:3, :3] @ angular - v_link[3:]
            base[3:] += delta
            base[:3] -= np.cross(delta, arm)
        if linear is not None:
            base[:3] += W_H_L[:3, :3] @ linear - v_link[:3]
        entry.pending["base_velocity"] = base
        return True
