"""URDF parser: a ``<robot>`` document into a :class:`ModelDescription`.

The URDF joint frame is the child link frame: ``<joint><origin>`` becomes ``P_H_C`` and the
axis is expressed in the child frame (``axis_point`` stays zero). Poses use URDF's fixed-axis
roll-pitch-yaw, ``R = Rz(yaw) Ry(pitch) Rx(roll)``. A root link named ``world`` welds the
model to the world: the link and its fixed joint are dropped, the child becomes the root and
``M_H_root`` is the joint origin; a floating joint from ``world`` gives a free base there
instead, and a moving joint from ``world`` keeps ``world`` as a massless root link welded to
the world. Floating and planar joints inside the tree are parsed, then rejected by
:func:`validate_description`. Visuals keep their colour: the ``<color rgba>`` of their
``<material>``, or of the robot-level material of that name (textures are ignored).
Transmissions, ros2_control and Gazebo extensions are ignored, but for a ``<gazebo reference>``'s
``<mu1>``: the friction of that link's collisions (:mod:`.surfaces`).

Read as urdfdom and PyBullet read it, with a located :class:`ModelLoadWarning` wherever a value is
changed: of several elements where one is expected (``<axis>``, ``<origin>``...) and of several
shapes in a ``<geometry>`` the first is used; a mesh scale of more than 3 numbers uses the first 3;
a lower limit above the upper one means unlimited; an unknown shape (PyBullet's ``<cdf>``) drops its
collision or visual. PyBullet's ``<plane normal>`` is a plane shape (terrain, no collidable points).
A free-base model with no mass and no moving joint (a tray, a table, a floor) is loaded as a static
model welded to the world.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re

import numpy as np
from lxml import etree

from .description import (
    JOINT_TYPES,
    Collision,
    Geometry,
    Inertial,
    JointDescription,
    JointLimits,
    LinkDescription,
    Mimic,
    ModelDescription,
    SourceLocation,
    Visual,
)
from .errors import ModelLoadError, warn
from .surfaces import urdf_friction, with_surfaces
from .uri import resolve_uri
from .validate import validate_description
from .xml import XACRO_HINT, XACRO_NAMESPACE, error_at, load_xml, location

WORLD = "world"

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INFINITY = re.compile(r"[+-]?inf(?:inity)?", re.IGNORECASE)
_MOVING_TYPES = ("revolute", "continuous", "prismatic", "planar")
_URDF_TYPES = tuple(kind for kind in JOINT_TYPES if kind != "ball")


def rpy_to_rotation(rpy) -> np.ndarray:
    """The rotation ``(3, 3)`` of fixed-axis roll, pitch, yaw [rad]: ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    roll, pitch, yaw = (float(value) for value in rpy)
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def pose_to_transform(xyz, rpy) -> np.ndarray:
    """The homogeneous transform ``(4, 4)`` of a position [m] and fixed-axis rpy [rad]."""
    transform = np.eye(4)
    transform[:3, :3] = rpy_to_rotation(rpy)
    transform[:3, 3] = np.asarray(xyz, dtype=float)
    return transform


class _Reader:
    """Strict readers of one document's attributes; every error points at its element."""

    def __init__(self, file: str | None, directory: str) -> None:
        self.file = file
        self.directory = directory
        self.materials: dict[str, tuple[float, float, float, float]] = {}

    def error(self, element: etree._Element, message: str) -> ModelLoadError:
        return error_at(element, self.file, message)

    def warn(self, element: etree._Element, message: str) -> None:
        where = location(element, self.file)
        warn(message, file=where.file, line=where.line, element=where.element)

    def required(self, element: etree._Element, attribute: str) -> str:
        value = element.get(attribute)
        if value is None or not value.strip():
            raise self.error(element, f"missing required attribute '{attribute}'")
        return value.strip()

    def child(self, element: etree._Element, tag: str, required: bool = False) -> etree._Element | None:
        found = element.findall(tag)
        if len(found) > 1:
            lines = ", ".join(str(other.sourceline) for other in found[1:])
            self.warn(element, f"several <{tag}> elements: the first (line {found[0].sourceline}) is used, not those of line(s) {lines}")
        if not found and required:
            raise self.error(element, f"missing required element <{tag}>")
        return found[0] if found else None

    def numbers(
        self,
        element: etree._Element,
        attribute: str,
        count: int,
        default: tuple[float, ...] | None = None,
        allow_infinity: bool = False,
        extra: bool = False,
    ) -> tuple[float, ...]:
        """``count`` numbers of ``attribute``; with ``extra``, more are accepted and the first ``count`` used (a warning)."""
        text = element.get(attribute)
        if text is None:
            if default is None:
                raise self.error(element, f"missing required attribute '{attribute}'")
            return default
        words = text.split()
        if extra and len(words) > count:
            self.warn(element, f"{attribute}='{text}': expected {count} number(s), got {len(words)}; the first {count} are used")
            words = words[:count]
        if len(words) != count:
            raise self.error(element, f"{attribute}='{text}': expected {count} number(s), got {len(words)}")
        values = []
        for word in words:
            if _NUMBER.fullmatch(word):
                value = float(word)
            elif allow_infinity and _INFINITY.fullmatch(word):
                value = float(word)
            elif word.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                raise self.error(element, f"{attribute}='{text}': non-finite value '{word}'")
            else:
                raise self.error(element, f"{attribute}='{text}': '{word}' is not a number")
            if not math.isfinite(value) and not (allow_infinity and math.isinf(value)):
                raise self.error(element, f"{attribute}='{text}': value out of range")
            values.append(value)
        return tuple(values)

    def number(self, element: etree._Element, attribute: str, default: float | None = None, **kwargs) -> float:
        return self.numbers(element, attribute, 1, None if default is None else (default,), **kwargs)[0]

    def origin(self, element: etree._Element) -> np.ndarray:
        origin = self.child(element, "origin")
        if origin is None:
            return np.eye(4)
        xyz = self.numbers(origin, "xyz", 3, (0.0, 0.0, 0.0))
        rpy = self.numbers(origin, "rpy", 3, (0.0, 0.0, 0.0))
        return pose_to_transform(xyz, rpy)

    def inertial(self, element: etree._Element) -> Inertial:
        mass = self.number(self.child(element, "mass", required=True), "value")
        inertia = self.child(element, "inertia", required=True)
        ixx, ixy, ixz, iyy, iyz, izz = (
            self.number(inertia, name) for name in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        )
        matrix = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        return Inertial(mass=mass, L_H_I=self.origin(element), inertia=matrix)

    def non_negative(self, element: etree._Element, values: tuple[float, ...], attribute: str) -> None:
        if any(value < 0.0 for value in values):
            raise self.error(element, f"{attribute} must not be negative")

    def geometry(self, element: etree._Element) -> Geometry | None:
        """The first shape of ``<geometry>`` (a warning if there are more); None, with a warning, for an unknown shape."""
        shapes = [child for child in element if isinstance(child.tag, str)]
        if not shapes:
            raise self.error(element, "no shape in <geometry>")
        shape = shapes[0]
        if len(shapes) > 1:
            listed = ", ".join(f"<{other.tag}>" for other in shapes)
            self.warn(element, f"several shapes ({listed}): the first is used")
        if shape.tag == "box":
            size = self.numbers(shape, "size", 3)
            self.non_negative(shape, size, "size")
            return Geometry(type="box", size=size)
        if shape.tag == "sphere":
            radius = self.number(shape, "radius")
            self.non_negative(shape, (radius,), "radius")
            return Geometry(type="sphere", radius=radius)
        if shape.tag in ("cylinder", "capsule"):
            radius, length = self.number(shape, "radius"), self.number(shape, "length")
            self.non_negative(shape, (radius, length), "radius and length")
            return Geometry(type=shape.tag, radius=radius, length=length)
        if shape.tag == "mesh":
            uri = self.required(shape, "filename")
            scale = self.numbers(shape, "scale", 3, (1.0, 1.0, 1.0), extra=True)
            path = resolve_uri(uri, self.directory)
            path = path if path is not None and os.path.isfile(path) else None
            return Geometry(type="mesh", uri=uri, path=path, scale=scale)
        if shape.tag == "plane":  # PyBullet's extension: an infinite plane through the shape origin
            normal = np.array(self.numbers(shape, "normal", 3, (0.0, 0.0, 1.0)))
            if np.linalg.norm(normal) < 1e-12:
                raise self.error(shape, "the plane normal must not be zero")
            return Geometry(type="plane", normal=tuple(normal / np.linalg.norm(normal)))
        self.warn(shape, f"unknown geometry '{shape.tag}': the {element.getparent().tag} is dropped")
        return None

    def link(self, element: etree._Element) -> LinkDescription:
        name = self.required(element, "name")
        inertial = self.child(element, "inertial")
        collisions = []
        for index, collision in enumerate(element.findall("collision")):
            label = collision.get("name") or f"{name}_collision_{index}"
            if any(existing.name == label for existing in collisions):
                label = f"{label}_{index}"
            geometry = self.geometry(self.child(collision, "geometry", required=True))
            if geometry is None:
                continue
            collisions.append(
                Collision(
                    name=label,
                    L_H_G=self.origin(collision),
                    geometry=geometry,
                    location=location(collision, self.file),
                )
            )
        visuals = []
        for index, visual in enumerate(element.findall("visual")):
            label = visual.get("name") or f"{name}_visual_{index}"
            if any(existing.name == label for existing in visuals):
                label = f"{label}_{index}"
            geometry = self.geometry(self.child(visual, "geometry", required=True))
            if geometry is None:
                continue
            visuals.append(
                Visual(
                    name=label,
                    L_H_G=self.origin(visual),
                    geometry=geometry,
                    rgba=self.material(self.child(visual, "material")),
                    location=location(visual, self.file),
                )
            )
        return LinkDescription(
            name=name,
            inertial=self.inertial(inertial) if inertial is not None else None,
            collisions=collisions,
            location=location(element, self.file),
            visuals=visuals,
        )

    def color(self, material: etree._Element) -> tuple[float, float, float, float] | None:
        """The ``<color rgba>`` of a ``<material>`` (each in [0, 1]), or None without one."""
        color = self.child(material, "color")
        if color is None:
            return None
        rgba = self.numbers(color, "rgba", 4)
        if any(not 0.0 <= value <= 1.0 for value in rgba):
            warn(f"rgba='{color.get('rgba')}': values are clipped to [0, 1]", file=self.file, line=color.sourceline, element="<color>")
        return tuple(min(max(value, 0.0), 1.0) for value in rgba)

    def material(self, material: etree._Element | None) -> tuple[float, float, float, float] | None:
        """A visual's colour: its own ``<color>``, else the robot-level material of its name."""
        if material is None:
            return None
        rgba = self.color(material)
        return rgba if rgba is not None else self.materials.get((material.get("name") or "").strip())

    def axis(self, element: etree._Element, joint_type: str) -> np.ndarray:
        axis = self.child(element, "axis")
        if axis is None:
            return np.array([1.0, 0.0, 0.0])
        xyz = np.array(self.numbers(axis, "xyz", 3, (1.0, 0.0, 0.0)))
        if joint_type not in _MOVING_TYPES:
            return np.array([1.0, 0.0, 0.0])
        norm = float(np.linalg.norm(xyz))
        if norm < 1e-12:
            raise self.error(axis, "the joint axis must not be zero")
        return xyz / norm

    def limits(self, element: etree._Element, joint_type: str) -> JointLimits:
        limit = self.child(element, "limit", required=joint_type in ("revolute", "prismatic"))
        if limit is None:
            return JointLimits()
        lower = self.number(limit, "lower", 0.0, allow_infinity=True)
        upper = self.number(limit, "upper", 0.0, allow_infinity=True)
        effort = self.number(limit, "effort", allow_infinity=True)
        velocity = self.number(limit, "velocity", allow_infinity=True)
        if joint_type not in ("revolute", "prismatic"):
            lower, upper = -math.inf, math.inf
        elif lower > upper:
            joint = element.get("name")
            self.warn(limit, f"lower limit {lower:g} above upper limit {upper:g} of joint '{joint}': taken as unlimited (as PyBullet does)")
            lower, upper = -math.inf, math.inf
        if joint_type not in _MOVING_TYPES:
            effort, velocity = math.inf, math.inf
        return JointLimits(lower=lower, upper=upper, effort=effort, velocity=velocity)

    def joint(self, element: etree._Element) -> JointDescription:
        name = self.required(element, "name")
        joint_type = self.required(element, "type")
        if joint_type not in _URDF_TYPES:
            raise self.error(element, f"unknown joint type '{joint_type}' (expected one of {', '.join(_URDF_TYPES)})")
        parent = self.required(self.child(element, "parent", required=True), "link")
        child = self.required(self.child(element, "child", required=True), "link")
        dynamics = self.child(element, "dynamics")
        damping = friction = 0.0
        if dynamics is not None:
            damping = self.number(dynamics, "damping", 0.0)
            friction = self.number(dynamics, "friction", 0.0)
        if joint_type not in _MOVING_TYPES:
            damping = friction = 0.0
        mimic_element = self.child(element, "mimic")
        mimic = None
        if mimic_element is not None:
            mimic = Mimic(
                joint=self.required(mimic_element, "joint"),
                multiplier=self.number(mimic_element, "multiplier", 1.0),
                offset=self.number(mimic_element, "offset", 0.0),
            )
        return JointDescription(
            name=name,
            type=joint_type,
            parent=parent,
            child=child,
            P_H_C=self.origin(element),
            axis=self.axis(element, joint_type),
            limits=self.limits(element, joint_type),
            damping=damping,
            friction=friction,
            mimic=mimic,
            location=location(element, self.file),
        )


def _error(where: SourceLocation, message: str) -> ModelLoadError:
    return ModelLoadError(message, file=where.file, line=where.line, element=where.element)


def _attach_to_world(
    links: list[LinkDescription], joints: list[JointDescription]
) -> tuple[list[LinkDescription], list[JointDescription], np.ndarray, bool]:
    """Remove a ``world`` root link: (links, joints, M_H_root, fixed_to_world).

    A fixed joint from ``world`` welds the root; a floating one leaves a free base at its
    origin; any other joint keeps ``world`` as a massless root link welded to the world.
    """
    world_link = next(link for link in links if link.name == WORLD)
    for joint in joints:
        if joint.child == WORLD:
            raise _error(joint.location, "link 'world' must be the root")
    from_world = [joint for joint in joints if joint.parent == WORLD]
    if not from_world:
        raise _error(world_link.location, "link 'world' has no joint to a child")
    if len(from_world) > 1:
        raise _error(from_world[1].location, "several joints from 'world': a model has a single root")
    joint = from_world[0]
    if joint.type not in ("fixed", "floating"):
        return links, joints, np.eye(4), True
    links = [link for link in links if link is not world_link]
    joints = [other for other in joints if other is not joint]
    return links, joints, joint.P_H_C.copy(), joint.type == "fixed"


def _massless_object(description: ModelDescription) -> bool:
    """True for a free-base model without mass or moving joints: an object PyBullet loads as static."""
    massless = all(link.inertial is None or link.inertial.mass <= 0.0 for link in description.links)
    return not description.fixed_to_world and massless and all(joint.type == "fixed" for joint in description.joints)


def parse_urdf(source: str | os.PathLike) -> ModelDescription:
    """Parse a URDF file path or XML string into a validated :class:`ModelDescription`.

    Raises :class:`ModelLoadError` naming file, line and element for malformed documents,
    invalid numbers and inconsistent trees.
    """
    document = load_xml(source)
    robot = document.root
    reader = _Reader(document.file, document.directory)
    if robot.tag != "robot":
        raise reader.error(robot, "a URDF document must have a <robot> root element")
    for element in robot.iter(f"{{{XACRO_NAMESPACE}}}*"):
        raise reader.error(element, f"xacro element <xacro:{etree.QName(element).localname}>: the document is a xacro template; {XACRO_HINT}")
    name = reader.required(robot, "name")
    for material in robot.findall("material"):
        rgba = reader.color(material)
        if rgba is not None:
            reader.materials[reader.required(material, "name")] = rgba
    links = [reader.link(element) for element in robot.findall("link")]
    friction, rule = urdf_friction(robot, document.file, {link.name for link in links})
    links = [dataclasses.replace(link, collisions=[
        c if c.geometry.type == "plane" else dataclasses.replace(c, friction=friction[link.name]) for c in link.collisions
    ]) if link.name in friction else link for link in links]
    joints = [reader.joint(element) for element in robot.findall("joint")]
    if not links:
        raise reader.error(robot, "the robot has no links")
    M_H_root, fixed_to_world = np.eye(4), False
    if any(link.name == WORLD for link in links):
        links, joints, M_H_root, fixed_to_world = _attach_to_world(links, joints)
    children = {joint.child for joint in joints}
    roots = [link.name for link in links if link.name not in children]
    description = ModelDescription(
        name=name,
        links=links,
        joints=joints,
        root=roots[0] if len(roots) == 1 else "",
        M_H_root=M_H_root,
        fixed_to_world=fixed_to_world,
        source=document.file,
    )
    if description.root and _massless_object(description):
        where = description.link(description.root).location
        warn(
            f"model '{name}' has no mass and no moving joint on a free base: loaded as a static model welded to the world "
            "(as PyBullet loads a base of zero mass)",
            file=where.file,
            line=where.line,
            element=where.element,
        )
        description = description.replace(fixed_to_world=True, static=True)
    description = with_surfaces(description, rule)
    validate_description(description)
    return description
