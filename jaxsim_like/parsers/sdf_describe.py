"""From a resolved SDFormat frame graph to a :class:`ModelDescription` (frames per description.py).

For a joint with parent link ``P``, child link ``C`` and joint frame ``J`` (all posed at zero
position): ``P_H_C = W_H_P^-1 W_H_C``, the axis is rotated from its ``expressed_in`` frame
into ``C`` and ``axis_point`` is the origin of ``J`` in ``C``. Names are relative to the
world-level model (``inner::link`` for a nested one). A link without ``<inertial>`` has the
SDFormat defaults: mass 1 kg, unit inertia at the link origin.

The root is the link without a parent joint. A fixed joint to ``world`` makes its child the
root, welded to the world (further fixed joints to ``world`` hang from that root); any other
joint to ``world`` keeps a massless ``world`` link as the root. In a static model, links
without a parent joint are welded to the root by fixed joints named ``__weld_<link>__``.

A joint that closes a loop becomes a loop closure (:class:`LoopClosure`) instead of a tree
joint. The joints are taken in document order (Pinocchio's SDF reader without parent guidance:
a link's first parent joint builds the tree): a joint closes a loop when its child link already
hangs from an earlier joint, or is the root of the tree its parent link hangs in (the joint would
close a cycle). The closure holds the joint's frame ``J`` (at zero position) in its child link
(``link1``) on ``J`` in its parent link (``link2``) with exactly the joint's rows
(:mod:`jaxsim_like.dynamics.loops`): a ``ball`` joint is a connect (``J``'s origin), a ``fixed``
joint a weld (``J``'s pose); for the others ``J`` is turned so that its ``z`` axis is
``<axis>``: a ``revolute`` or ``continuous`` joint is a hinge (5 rows), a ``prismatic`` joint a
slider (5), a ``screw`` joint a screw (5, with its pitch), a ``universal`` or ``revolute2``
joint a universal (4), ``J`` turned in the child so that its ``z`` axis is ``<axis2>``; one
whose two axes are not perpendicular is a connect with a warning that the links also turn about
the axis normal to the two. The closures have the joint's name
and MuJoCo's default reference (``solref`` 0.02 s, damping ratio 1). A joint that would close a
loop with the world as its parent is refused. Pinocchio instead splits the child link into one
copy per parent joint, welded together, so that every joint type closes exactly.

A ``universal`` joint ``J`` (DART's: the child turns about ``<axis>``, then about ``<axis2>``
carried by that turn, both axes given at zero position) is two revolute joints through a
massless link ``C::J`` posed as the child: ``J`` about ``<axis>`` from the parent to ``C::J``,
then ``J::axis2`` about ``<axis2>`` from ``C::J`` to the child, each with its axis's limits and
dynamics.

A ``revolute2`` joint is loaded the same way. Gazebo builds it only with ODE, as ODE's hinge-2
joint: ``<axis>`` fixed in the parent, ``<axis2>`` fixed in the child, two rotations in series,
the same kinematics (ODE's universal joint differs only in wanting the axes perpendicular, which
neither needs here: they must not be parallel). ODE's hinge-2 also lets the child slide along
``<axis>`` on a spring (``<physics><ode><suspension>``, its ``cfm`` and ``erp``): that
suspension is not modelled, the joint stays rigid along the axis, and a ``<suspension>`` warns.

A ``screw`` joint turns the child about ``<axis>`` by its position ``q`` [rad] and moves it
along the axis by ``pitch * q``, ``pitch`` [m/rad] (DART's screw joint and Pinocchio's helical
one; :class:`JointDescription`), with the limits and dynamics of a revolute joint's
``<axis>``. SDFormat 1.10 brought ``<screw_thread_pitch>`` [m per revolution, positive for a
right-handed thread]: ``pitch = screw_thread_pitch / 2 pi``; the older ``<thread_pitch>``
[rad/m, positive for a left-handed thread, as Gazebo classic reads it] gives ``pitch = -1 /
thread_pitch``, as libsdformat converts it. ``screw_thread_pitch`` wins when both are given;
``thread_pitch`` in a 1.10+ file warns that it is deprecated. Without either, the default of the
file's version applies, with a warning: 1 m per revolution from 1.10, ``thread_pitch`` 1 rad/m
before.

A ``gearbox`` joint has no degree of freedom: it makes ``theta_2 = -gearbox_ratio * theta_1``,
where ``theta_1`` is the angle of its parent link relative to ``<gearbox_reference_body>``
about ``<axis>`` and ``theta_2`` that of its child link about ``<axis2>`` (ODE's gearbox joint,
a constraint on the velocities, so the angles count from the loaded pose). It loads as a joint
coupling (:class:`Mimic`) when each of the two links hangs from the reference body by a
revolute or continuous joint whose axis is parallel to the gearbox's (``<axis>`` for the
parent, ``<axis2>`` for the child): the child's joint ``J_2`` follows the parent's ``J_1`` by
``q_2 = -gearbox_ratio * s_1 * s_2 * q_1``, ``s_k = +1`` where ``J_k``'s axis points as the
gearbox's and -1 where it points the other way. Any other layout is refused, naming the joint.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from lxml import etree

from .description import (
    Collision,
    FrameDescription,
    Inertial,
    JointDescription,
    JointLimits,
    LinkDescription,
    LoopClosure,
    Mimic,
    ModelDescription,
    Visual,
)
from .errors import ModelLoadError
from .sdf_declare import Declarations, JointDeclaration
from .sdf_frames import WORLD, Node, Ref, Scope, inverse
from .sdf_values import (
    boolean,
    child,
    child_number,
    child_text,
    numbers,
    pose_matrix,
    pose_reference,
    read_diffuse,
    read_geometry,
)
from .surfaces import sdf_bitmasks, sdf_friction
from .xml import error_at, location, warn_at

_SDF_INFINITY = 1e16
_MOVING_JOINTS = ("revolute", "continuous", "prismatic", "screw")
_TWO_AXES = ("universal", "revolute2")
_GEAR_JOINTS = ("revolute", "continuous")
_SCREW_VERSION = (1, 10)
_CLOSING_KINDS = {
    "ball": "connect", "fixed": "weld", "revolute": "hinge", "continuous": "hinge", "prismatic": "slider", "screw": "screw",
    "universal": "universal", "revolute2": "universal",
}
_PERPENDICULAR = 1e-9
"""The largest ``|cos|`` of the angle of a closing universal joint's two axes taken as a right angle."""


def _z_along(axis: np.ndarray) -> np.ndarray:
    """``(4, 4)``: a rotation whose ``z`` axis is the unit vector ``axis``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    H = np.eye(4)
    H[:3, :3] = np.column_stack([x, np.cross(axis, x), axis])
    return H


def _bound(value: float) -> float:
    return math.copysign(math.inf, value) if abs(value) >= _SDF_INFINITY else value


def _cap(value: float) -> float:
    return math.inf if value < 0.0 else value


def _located(joint: JointDescription, message: str) -> ModelLoadError:
    where = joint.location
    return ModelLoadError(message, file=where.file, line=where.line, element=where.element)


class _ModelBuilder:
    """Builds the description of one world-level model of ``declarations``."""

    def __init__(self, declarations: Declarations, model: Node) -> None:
        self.graph = declarations.graph
        self.declarations = declarations
        self.model = model
        self.scope: Scope = declarations.scopes[model.id]
        self.prefix = f"{model.name}::"
        self.W_H_M = self.graph.world_pose(model.id)

    def name(self, node_id: str) -> str:
        return self.graph.nodes[node_id].name[len(self.prefix) :]

    def M_H(self, node_id: str) -> np.ndarray:
        return self.graph.relative_pose(node_id, self.model.id)

    def local_pose(
        self, element: etree._Element | None, scope: Scope, file: str | None, W_H_L: np.ndarray
    ) -> np.ndarray:
        """``L_H_X`` of a ``<pose>`` inside a link: in the link frame, or in its ``relative_to`` frame."""
        X = pose_matrix(element, file)
        reference = pose_reference(element)
        if reference is None:
            return X
        frame = self.graph.lookup(Ref(scope, reference, element, file))
        return inverse(W_H_L) @ self.graph.world_pose(frame) @ X

    def link(self, node: Node) -> LinkDescription:
        element, file, scope = node.element, node.file, node.scope
        W_H_L = self.graph.world_pose(node.id)
        inertial_element = child(element, "inertial", file)
        if inertial_element is None:
            inertial = Inertial(mass=1.0, inertia=np.eye(3))
        else:
            if (inertial_element.get("auto") or "").strip().lower() in ("true", "1"):
                raise error_at(
                    inertial_element,
                    file,
                    'automatic inertia (auto="true") is not supported: write <mass> and <inertia>',
                )
            tensor = child(inertial_element, "inertia", file)
            ixx, iyy, izz = (child_number(tensor, tag, 1.0, file) for tag in ("ixx", "iyy", "izz"))
            ixy, ixz, iyz = (child_number(tensor, tag, 0.0, file) for tag in ("ixy", "ixz", "iyz"))
            inertial = Inertial(
                mass=child_number(inertial_element, "mass", 1.0, file),
                L_H_I=self.local_pose(child(inertial_element, "pose", file), scope, file, W_H_L),
                inertia=np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]),
            )
        collisions = [
            Collision(name=name, L_H_G=L_H_G, geometry=geometry, location=location(item, file),
                      friction=None if geometry.type == "plane" else sdf_friction(item, file), bitmasks=sdf_bitmasks(item, file))
            for item, name, L_H_G, geometry in self.shapes(element, "collision", scope, file, W_H_L)
        ]
        visuals = [
            Visual(name=name, L_H_G=L_H_G, geometry=geometry, rgba=read_diffuse(item, file), location=location(item, file))
            for item, name, L_H_G, geometry in self.shapes(element, "visual", scope, file, W_H_L)
        ]
        return LinkDescription(
            name=self.name(node.id),
            inertial=inertial,
            collisions=collisions,
            location=location(element, file),
            visuals=visuals,
        )

    def shapes(self, element, tag: str, scope, file: str | None, W_H_L: np.ndarray):
        """``(item, name, L_H_G, geometry)`` of each ``<collision>`` or ``<visual>`` (``tag``) of a
        link whose geometry is read (an ``<empty>`` one is skipped); ModelLoadError for two
        read elements of one name or a missing ``<geometry>``."""
        names: set[str] = set()
        for index, item in enumerate(element.findall(tag)):
            name = (item.get("name") or "").strip() or f"{tag}_{index}"
            if name in names:
                raise error_at(item, file, f"duplicate {tag} name '{name}'")
            shape = child(item, "geometry", file)
            if shape is None:
                raise error_at(item, file, "missing <geometry>")
            geometry = read_geometry(shape, file, scope.directory, tag)
            if geometry is not None:
                names.add(name)
                yield item, name, self.local_pose(child(item, "pose", file), scope, file, W_H_L), geometry

    def joint(self, declaration: JointDeclaration) -> JointDescription:
        node = declaration.node
        graph = self.graph
        child_link = graph.attached_link(graph.lookup(declaration.child))
        parent_link = WORLD if declaration.parent is None else graph.attached_link(graph.lookup(declaration.parent))
        if parent_link == child_link:
            raise node.error(f"joint '{node.name}' connects link '{graph.nodes[child_link].name}' to itself")
        W_H_C = graph.world_pose(child_link)
        C_H_J = inverse(W_H_C) @ graph.world_pose(node.id)
        description = JointDescription(
            name=self.name(node.id),
            type=declaration.type,
            parent=WORLD if parent_link == WORLD else self.name(parent_link),
            child=self.name(child_link),
            P_H_C=inverse(graph.world_pose(parent_link)) @ W_H_C,
            axis_point=C_H_J[:3, 3].copy(),
            location=location(node.element, node.file),
        )
        if declaration.type in _MOVING_JOINTS:
            self.axis(description, node, W_H_C)
        if declaration.type == "screw":
            description.pitch = self.screw_pitch(node)
        return description

    def screw_pitch(self, node: Node) -> float:
        """A screw joint's pitch [m/rad] from ``<screw_thread_pitch>`` or ``<thread_pitch>`` (see
        the module docstring)."""
        file, version = node.file, node.scope.version
        modern, legacy = child(node.element, "screw_thread_pitch", file), child(node.element, "thread_pitch", file)
        if modern is not None:
            return child_number(node.element, "screw_thread_pitch", 1.0, file) / (2.0 * math.pi)
        if legacy is not None:
            thread_pitch = child_number(node.element, "thread_pitch", 1.0, file)
            if thread_pitch == 0.0:
                raise error_at(legacy, file, "thread_pitch must not be zero (it is radians per metre)")
            if version >= _SCREW_VERSION:
                warn_at(legacy, file, "thread_pitch is deprecated since SDFormat 1.10: read as -2 pi / thread_pitch "
                        "metres per revolution; write <screw_thread_pitch>")
            return -1.0 / thread_pitch
        if version >= _SCREW_VERSION:
            warn_at(node.element, file, f"screw joint '{node.name}' has no <screw_thread_pitch>: 1 m per revolution (the default)")
            return 1.0 / (2.0 * math.pi)
        warn_at(node.element, file, f"screw joint '{node.name}' has no <thread_pitch>: 1 rad/m, left-handed (the default)")
        return -1.0

    def universal(self, declaration: JointDeclaration) -> tuple[LinkDescription, list[JointDescription]]:
        """The massless link and the two revolute joints of a ``universal`` or ``revolute2``
        joint (see the module docstring)."""
        first = self.joint(declaration)
        node = declaration.node
        W_H_C = self.graph.world_pose(self.graph.attached_link(self.graph.lookup(declaration.child)))
        link = LinkDescription(name=f"{first.child}::{first.name}", location=first.location)
        second = JointDescription(
            name=f"{first.name}::axis2", type="revolute", parent=link.name, child=first.child,
            axis_point=first.axis_point.copy(), location=first.location,
        )
        first.type, first.child = "revolute", link.name
        self.axis(first, node, W_H_C)
        self.axis(second, node, W_H_C, "axis2")
        if np.linalg.norm(np.cross(first.axis, second.axis)) < 1e-6:
            raise node.error(
                f"{declaration.type} joint '{first.name}' has parallel <axis> and <axis2>: it would turn about one axis twice"
            )
        if declaration.type == "revolute2":
            suspension = node.element.find("physics/ode/suspension")
            if suspension is not None:
                warn_at(suspension, node.file, f"revolute2 joint '{first.name}': ODE's suspension is not modelled "
                        "(the joint is rigid along <axis>)")
        return link, [first, second]

    def gearbox(self, declaration: JointDeclaration, joints: list[JointDescription]) -> None:
        """Make the child link's joint follow the parent link's by a ``gearbox`` joint's ratio
        (see the module docstring); ModelLoadError naming the joint for any other layout."""
        node, graph, file = declaration.node, self.graph, declaration.node.file
        name = self.name(node.id)
        reference_name = child_text(node.element, "gearbox_reference_body", file)
        if reference_name is None:
            raise node.error(f"gearbox joint '{name}' has no <gearbox_reference_body>")
        reference_element = child(node.element, "gearbox_reference_body", file)
        if reference_name == WORLD:
            reference = WORLD
        else:
            reference_link = graph.attached_link(graph.lookup(Ref(node.scope, reference_name, reference_element, file)))
            reference = WORLD if reference_link == WORLD else self.name(reference_link)
        if declaration.parent is None:
            raise node.error(f"gearbox joint '{name}': its parent is the world; a gearbox couples two links")
        parent_link = graph.attached_link(graph.lookup(declaration.parent))
        child_link = graph.attached_link(graph.lookup(declaration.child))
        ratio = child_number(node.element, "gearbox_ratio", 1.0, file)
        signs, gears = [], []
        for link, tag in ((parent_link, "axis"), (child_link, "axis2")):
            link_name = self.name(link)
            hanging = [joint for joint in joints if joint.child == link_name]
            joint = next((j for j in hanging if j.parent == reference and j.type in _GEAR_JOINTS), None)
            if joint is None:
                ways = " and ".join(f"from '{j.parent}' by the {j.type} joint '{j.name}'" for j in hanging)
                how = f"hangs {ways}" if hanging else "is the root"
                raise node.error(
                    f"gearbox joint '{name}': link '{link_name}' {how}; a gearbox needs both of its links to hang "
                    f"from its reference body '{reference}' by revolute joints"
                )
            gear = JointDescription(name=name, type="revolute", parent=reference, child=link_name, location=joint.location)
            self.axis(gear, node, graph.world_pose(link), tag)
            alignment = float(np.dot(gear.axis, joint.axis))
            if abs(alignment) < 1 - 1e-6:
                raise node.error(
                    f"gearbox joint '{name}': its <{tag}> is not parallel to the axis of joint '{joint.name}', "
                    f"which turns link '{link_name}'"
                )
            signs.append(math.copysign(1.0, alignment))
            gears.append(joint)
        leader, follower = gears
        if follower.mimic is not None:
            raise node.error(f"gearbox joint '{name}': joint '{follower.name}' already mimics joint '{follower.mimic.joint}'")
        follower.mimic = Mimic(joint=leader.name, multiplier=-ratio * signs[0] * signs[1], offset=0.0)

    def links_of(self, declaration: JointDeclaration) -> tuple[str, str]:
        """The node ids of a joint's parent link (``WORLD``: the world) and child link."""
        graph = self.graph
        parent = WORLD if declaration.parent is None else graph.attached_link(graph.lookup(declaration.parent))
        return parent, graph.attached_link(graph.lookup(declaration.child))

    def closing_joints(self, declared: list[JointDeclaration]) -> set[str]:
        """The node ids of the joints that close a loop (see the module docstring): in document
        order, a joint whose child link already hangs from a joint, or is the root of the tree of
        its parent link; ModelLoadError for one whose parent is the world."""
        parent_of: dict[str, str] = {}
        closing: set[str] = set()
        for item in declared:
            if item.type == "gearbox":
                continue
            parent, child_link = self.links_of(item)
            ancestor = parent
            while ancestor in parent_of and ancestor != child_link:
                ancestor = parent_of[ancestor]
            if child_link not in parent_of and ancestor != child_link:
                parent_of[child_link] = parent
                continue
            if parent == WORLD:
                raise item.node.error(
                    f"joint '{self.name(item.node.id)}' closes a loop to the world (link "
                    f"'{self.name(child_link)}' already hangs from the tree): not supported"
                )
            closing.add(item.node.id)
        return closing

    def closures(self, declaration: JointDeclaration) -> list[LoopClosure]:
        """The :class:`LoopClosure` of a joint that closes a loop: its frame ``J`` (at zero
        position; turned so that its ``z`` axis is the joint's axis where it has one) held in its
        child link and in its parent link, with the rows of its type (see the module docstring)."""
        node, graph = declaration.node, self.graph
        parent, child_link = self.links_of(declaration)
        name = self.name(node.id)
        if parent == child_link:
            raise node.error(f"joint '{node.name}' connects link '{graph.nodes[child_link].name}' to itself")
        C_H_J, P_H_J = graph.relative_pose(node.id, child_link), graph.relative_pose(node.id, parent)
        kind, pitch = _CLOSING_KINDS[declaration.type], 0.0
        L1_H_F1, L2_H_F2 = C_H_J, P_H_J
        if kind not in ("connect", "weld"):
            W_H_C = graph.world_pose(child_link)
            J_axis = self.closing_axis(declaration, W_H_C, C_H_J, "axis")
            L1_H_F1, L2_H_F2 = C_H_J @ _z_along(J_axis), P_H_J @ _z_along(J_axis)
        if kind == "screw":
            pitch = self.screw_pitch(node)
            joint = JointDescription(name=node.name, type=declaration.type, parent="", child="")
            self.axis(joint, node, W_H_C)
            if not (joint.limits.lower >= -math.pi and joint.limits.upper <= math.pi):
                warn_at(node.element, node.file, f"screw joint '{name}' closes a loop: its closure reads the turn from the two "
                        "frames' relative rotation, within half a turn either way of the joint's zero, and its limits "
                        f"({joint.limits.lower:g}, {joint.limits.upper:g}) rad allow more; past half a turn the turn wraps and "
                        "the closure pulls the child one pitch per turn along the axis")
        if kind == "universal":
            J_axis2 = self.closing_axis(declaration, W_H_C, C_H_J, "axis2")
            L1_H_F1 = C_H_J @ _z_along(J_axis2)
            if abs(float(J_axis @ J_axis2)) > _PERPENDICULAR:
                warn_at(node.element, node.file, f"{declaration.type} joint '{name}' closes a loop with <axis> and <axis2> "
                        "not perpendicular: loaded as a connect (its frame's origin held in both links), so the links "
                        "also turn freely about the axis normal to the two")
                kind, L1_H_F1, L2_H_F2 = "connect", C_H_J, P_H_J
        closure = LoopClosure(
            name=name, kind=kind, link1=self.name(child_link), link2=self.name(parent), L1_H_F1=L1_H_F1, L2_H_F2=L2_H_F2,
            location=location(node.element, node.file), pitch=pitch,
        )
        return [closure]

    def closing_axis(self, declaration: JointDeclaration, W_H_C: np.ndarray, C_H_F: np.ndarray, tag: str) -> np.ndarray:
        """``(3,)``: the unit axis ``<axis>`` (or ``tag``: ``<axis2>``) of a closing joint in its
        frame ``F`` (``C_H_F`` in the child link ``C``, posed at ``W_H_C``)."""
        joint = JointDescription(name=declaration.node.name, type=declaration.type, parent="", child="")
        self.axis(joint, declaration.node, W_H_C, tag)
        return C_H_F[:3, :3].T @ joint.axis

    def axis(self, description: JointDescription, node: Node, W_H_C: np.ndarray, tag: str = "axis") -> None:
        """Fill axis, limits, dynamics and mimic from ``<axis>`` (or ``tag``: ``<axis2>``)."""
        file, scope, version = node.file, node.scope, node.scope.version
        axis = child(node.element, tag, file)
        xyz = child(axis, "xyz", file)
        vector = numbers(xyz, file, (3,)) if xyz is not None else np.array([0.0, 0.0, 1.0])
        norm = float(np.linalg.norm(vector))
        if norm < 1e-12:
            raise error_at(xyz, file, "the joint axis must not be zero")
        legacy = child(axis, "use_parent_model_frame", file)
        if legacy is not None and version >= (1, 7):
            raise error_at(
                legacy, file, 'use_parent_model_frame was removed in SDFormat 1.7: use <xyz expressed_in="__model__">'
            )
        expressed_in = (xyz.get("expressed_in") or "").strip() if xyz is not None else ""
        if expressed_in:
            frame = self.graph.lookup(Ref(scope, expressed_in, xyz, file))
        elif boolean(legacy, file) if legacy is not None else (version < (1, 5) and axis is not None):
            frame = scope.frame
        else:
            frame = node.id
        C_R_E = (inverse(W_H_C) @ self.graph.world_pose(frame))[:3, :3]
        description.axis = C_R_E @ (vector / norm)
        limit = child(axis, "limit", file)
        lower = _bound(child_number(limit, "lower", -_SDF_INFINITY, file))
        upper = _bound(child_number(limit, "upper", _SDF_INFINITY, file))
        if description.type == "continuous":
            lower, upper = -math.inf, math.inf
        elif lower > upper:
            raise error_at(limit, file, f"lower limit {lower} exceeds upper limit {upper}")
        description.limits = JointLimits(
            lower=lower,
            upper=upper,
            effort=_cap(child_number(limit, "effort", -1.0, file)),
            velocity=_cap(child_number(limit, "velocity", -1.0, file)),
        )
        dynamics = child(axis, "dynamics", file)
        description.damping = child_number(dynamics, "damping", 0.0, file)
        description.friction = child_number(dynamics, "friction", 0.0, file)
        description.stiffness = child_number(dynamics, "spring_stiffness", 0.0, file)
        description.spring_reference = child_number(dynamics, "spring_reference", 0.0, file)
        mimic = child(axis, "mimic", file)
        if mimic is not None:
            leader = (mimic.get("joint") or "").strip()
            if not leader:
                raise error_at(mimic, file, "missing attribute 'joint'")
            try:
                target = self.graph.lookup(Ref(scope, leader, mimic, file))
            except ModelLoadError:  # a missing leader: validate_description warns and drops the mimic
                target = None
            is_joint = target is not None and self.graph.nodes[target].kind == "joint"
            multiplier = child_number(mimic, "multiplier", 1.0, file)
            offset = child_number(mimic, "offset", 0.0, file) - multiplier * child_number(mimic, "reference", 0.0, file)
            description.mimic = Mimic(joint=self.name(target) if is_joint else leader, multiplier=multiplier, offset=offset)

    def frame(self, node: Node) -> FrameDescription:
        link = self.graph.attached_link(node.id)
        L_H_F = self.graph.relative_pose(node.id, link)
        return FrameDescription(
            name=self.name(node.id), link=self.name(link), L_H_F=L_H_F, location=location(node.element, node.file)
        )

    def build(self) -> ModelDescription:
        top = self.model.id
        links = [self.link(node) for node in self.declarations.links if node.scope.top == top]
        if not links:
            raise self.model.error(f"model '{self.model.name}' has no links")
        joints = []
        declared = [item for item in self.declarations.joints if item.node.scope.top == top]
        closing = self.closing_joints(declared)
        loops = [loop for item in declared if item.node.id in closing for loop in self.closures(item)]
        for item in declared:
            if item.node.id in closing:
                continue
            if item.type in _TWO_AXES:
                link, pair = self.universal(item)
                links.append(link)
                joints.extend(pair)
            elif item.type != "gearbox":
                joints.append(self.joint(item))
        for item in declared:
            if item.type == "gearbox":
                self.gearbox(item, joints)
        frames = [self.frame(node) for node in self.declarations.frames if node.scope.top == top]
        static = self.scope.static
        to_world = [joint for joint in joints if joint.parent == WORLD]
        root, M_H_root = "", np.eye(4)
        if any(joint.type != "fixed" for joint in to_world):
            links.insert(0, LinkDescription(name=WORLD, location=location(self.model.element, self.model.file)))
            root, M_H_root = WORLD, inverse(self.W_H_M)
        elif to_world:
            root = to_world[0].child
            M_H_root = self.M_H(f"link:{self.prefix}{root}")
            joints.remove(to_world[0])
            for joint in to_world[1:]:
                if joint.child == root:
                    raise _located(joint, f"link '{root}' is attached to the world by several joints")
                joint.parent = root
                joint.P_H_C = inverse(M_H_root) @ self.M_H(f"link:{self.prefix}{joint.child}")
        children = {joint.child for joint in joints}
        roots = [link.name for link in links if link.name not in children]
        if not root and roots:
            canonical = self.name(self.graph.attached_link(top))
            root = canonical if static and canonical in roots else roots[0]
            M_H_root = self.M_H(f"link:{self.prefix}{root}")
        if static:
            for name in roots:
                if name != root:
                    M_H_link = self.M_H(f"link:{self.prefix}{name}")
                    link = next(item for item in links if item.name == name)
                    joints.append(
                        JointDescription(
                            name=f"__weld_{name}__",
                            type="fixed",
                            parent=root,
                            child=name,
                            P_H_C=inverse(M_H_root) @ M_H_link,
                            location=link.location,
                        )
                    )
        return ModelDescription(
            name=self.model.name,
            links=links,
            joints=joints,
            frames=frames,
            root=root,
            M_H_root=M_H_root,
            W_H_M=self.W_H_M,
            fixed_to_world=static or bool(to_world),
            static=static,
            loops=loops,
            source=self.scope.file,
        )


def describe_model(declarations: Declarations, model: Node) -> list[ModelDescription]:
    """The descriptions of the world-level ``model`` (not yet validated): one per tree. A model
    whose links are not all joined (SDF lets links without joints between them move freely, as
    Gazebo's engines simulate them) is one description per set of joined links, rooted at its
    root link: the tree of the model's canonical link first, named after the model, the others
    ``model::root``. A static model is one tree (its unjoined links welded to its root)."""
    builder = _ModelBuilder(declarations, model)
    description = builder.build()
    parents = {joint.child: joint.parent for joint in description.joints}
    roots = [link.name for link in description.links if link.name not in parents]
    if len(roots) <= 1:
        return [description]

    def root_of(link: str) -> str:
        while link in parents:
            link = parents[link]
        return link

    tree = {link.name: root_of(link.name) for link in description.links}
    canonical = tree.get(builder.name(builder.graph.attached_link(model.id)), roots[0])
    trees = []
    for root in sorted(roots, key=lambda name: name != canonical):
        def mine(link: str, root: str = root) -> bool:
            return tree.get(link) == root
        trees.append(dataclasses.replace(
            description,
            name=description.name if root == canonical else f"{description.name}::{root}",
            links=[link for link in description.links if mine(link.name)],
            joints=[joint for joint in description.joints if mine(joint.child)],
            frames=[frame for frame in description.frames if mine(frame.link)],
            loops=[loop for loop in description.loops if mine(loop.link1) or mine(loop.link2)],
            root=root,
            M_H_root=description.M_H_root if root == description.root else builder.M_H(f"link:{builder.prefix}{root}"),
            fixed_to_world=description.fixed_to_world and root == description.root,
        ))
    return trees
