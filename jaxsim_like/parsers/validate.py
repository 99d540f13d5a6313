"""Consistency checks on a :class:`ModelDescription`, shared by the URDF and SDF parsers.

Every failure raises :class:`ModelLoadError` at the :class:`SourceLocation` of the offending
link, joint or frame (the model's ``source`` file when the location names none); what loads
after a documented fix warns with :class:`ModelLoadWarning` at the same kind of location.
"""

from __future__ import annotations

import math

import numpy as np

from .description import (
    JOINT_TYPES,
    Inertial,
    JointDescription,
    ModelDescription,
    SourceLocation,
)
from .errors import ModelLoadError, warn

_RELATIVE_TOLERANCE = 1e-6
_ROTATION_TOLERANCE = 1e-6
_AXIS_TYPES = ("revolute", "continuous", "prismatic", "planar", "screw")
_IDENTITY = np.eye(3)
_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])


def _fail(description: ModelDescription, where: SourceLocation, message: str) -> ModelLoadError:
    where = where.within(description.source)
    return ModelLoadError(message, file=where.file, line=where.line, element=where.element)


def _check_transform(description: ModelDescription, where: SourceLocation, name: str, transform) -> None:
    """A finite ``(4, 4)`` rigid transform: orthonormal rotation with determinant +1."""
    matrix = np.asarray(transform, dtype=float)
    if matrix.shape != (4, 4) or not np.isfinite(matrix).all():
        raise _fail(description, where, f"{name} is not a finite 4x4 transform")
    rotation = matrix[:3, :3]
    orthonormal = np.abs(rotation.T @ rotation - _IDENTITY).max() <= _ROTATION_TOLERANCE
    if not orthonormal or np.linalg.det(rotation) < 0 or np.abs(matrix[3] - _LAST_ROW).max() > _ROTATION_TOLERANCE:
        raise _fail(description, where, f"{name} is not a rigid transform")


def _check_names(description: ModelDescription) -> None:
    seen: set[str] = set()
    for link in description.links:
        if link.name in seen:
            raise _fail(description, link.location, f"duplicate link name '{link.name}'")
        seen.add(link.name)
    joints: set[str] = set()
    for joint in description.joints:
        if joint.name in joints:
            raise _fail(description, joint.location, f"duplicate joint name '{joint.name}'")
        joints.add(joint.name)
    for frame in description.frames:
        if frame.name in seen:
            raise _fail(description, frame.location, f"frame name '{frame.name}' is already a link or frame name")
        seen.add(frame.name)


def _check_topology(description: ModelDescription) -> dict[str, JointDescription]:
    """The joint to each child link, after checking references, parents, cycles and roots."""
    links = {link.name: link for link in description.links}
    if not links:
        raise ModelLoadError(f"model '{description.name}' has no links", file=description.source)
    parent_joint: dict[str, JointDescription] = {}
    for joint in description.joints:
        if joint.type not in JOINT_TYPES:
            raise _fail(description, joint.location, f"unknown joint type '{joint.type}'")
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise _fail(description, joint.location, f"{role} link '{link}' does not exist")
        if joint.parent == joint.child:
            raise _fail(description, joint.location, f"joint connects link '{joint.child}' to itself")
        if joint.child in parent_joint:
            first = parent_joint[joint.child].name
            raise _fail(
                description,
                joint.location,
                f"link '{joint.child}' has two parents (joints '{first}' and '{joint.name}')",
            )
        parent_joint[joint.child] = joint
    reaches_root: set[str] = set()
    for link in description.links:
        path: set[str] = set()
        current = link.name
        while current not in reaches_root and current in parent_joint:
            if current in path:
                joint = parent_joint[current]
                raise _fail(description, joint.location, f"kinematic loop through joint '{joint.name}'")
            path.add(current)
            current = parent_joint[current].parent
        reaches_root.update(path)
        reaches_root.add(current)
    roots = [link for link in description.links if link.name not in parent_joint]
    if len(roots) > 1:
        names = ", ".join(f"'{root.name}'" for root in roots)
        raise _fail(description, roots[1].location, f"several root links ({names}): the model must be a single tree")
    if description.root and description.root != roots[0].name:
        raise _fail(description, roots[0].location, f"root '{description.root}' differs from the tree root")
    for frame in description.frames:
        if frame.link not in links:
            raise _fail(description, frame.location, f"frame attached to unknown link '{frame.link}'")
    return parent_joint


def _check_joint(description: ModelDescription, joint: JointDescription) -> None:
    where = joint.location
    if joint.type == "floating":
        raise _fail(
            description,
            where,
            f"floating joint '{joint.name}' inside the kinematic tree is not supported "
            "(only the base may be free: a floating joint from 'world' or no joint to the world)",
        )
    if joint.type == "planar":
        raise _fail(description, where, f"planar joint '{joint.name}' is not supported")
    _check_transform(description, where, "joint origin", joint.P_H_C)
    axis = np.asarray(joint.axis, dtype=float)
    point = np.asarray(joint.axis_point, dtype=float)
    if axis.shape != (3,) or point.shape != (3,) or not (np.isfinite(axis).all() and np.isfinite(point).all()):
        raise _fail(description, where, "joint axis must be finite 3-vectors")
    if joint.type in _AXIS_TYPES and abs(np.linalg.norm(axis) - 1.0) > 1e-6:
        raise _fail(description, where, f"joint axis {axis.tolist()} is not a unit vector")
    limits = joint.limits
    values = (limits.lower, limits.upper, limits.effort, limits.velocity, joint.damping, joint.friction)
    if any(math.isnan(value) for value in values):
        raise _fail(description, where, "NaN in joint limits or dynamics")
    if limits.lower > limits.upper:
        raise _fail(description, where, f"lower limit {limits.lower} exceeds upper limit {limits.upper}")
    if limits.lower == math.inf or limits.upper == -math.inf:
        raise _fail(description, where, "infinite limits must be lower=-inf, upper=+inf")
    for label, value in (("effort", limits.effort), ("velocity", limits.velocity)):
        if value < 0.0:
            raise _fail(description, where, f"negative {label} limit {value}")
    for label, value in (("damping", joint.damping), ("friction", joint.friction)):
        if value < 0.0 or not math.isfinite(value):
            raise _fail(description, where, f"{label} must be finite and non-negative, got {value}")
    if not math.isfinite(joint.pitch) or (joint.pitch != 0.0 and joint.type != "screw"):
        raise _fail(description, where, f"pitch {joint.pitch} on a {joint.type} joint: only a screw joint has a (finite) pitch")
    if joint.mimic is not None and not (math.isfinite(joint.mimic.multiplier) and math.isfinite(joint.mimic.offset)):
        raise _fail(description, where, "mimic multiplier and offset must be finite")
    if joint.mimic is not None and not (0.0 <= joint.mimic.time_constant < math.inf and 0.0 < joint.mimic.damping_ratio < math.inf):
        raise _fail(description, where, "mimic time constant must be finite and >= 0 [s], its damping ratio finite and positive")


def _drop_invalid_mimics(description: ModelDescription) -> None:
    """One warning for the mimics that name a missing joint (or their own), which are then dropped;
    an empty name is a welded leader."""
    names = {joint.name for joint in description.joints} | {""}
    invalid = [
        joint
        for joint in description.joints
        if joint.mimic is not None and (joint.mimic.joint == joint.name or joint.mimic.joint not in names)
    ]
    if not invalid:
        return
    where = invalid[0].location.within(description.source)
    listed = ", ".join(
        f"'{joint.name}'" + (f" (line {joint.location.line})" if joint.location.line is not None else "") + f" -> '{joint.mimic.joint}'"
        for joint in invalid
    )
    warn(
        f"mimic refers to invalid joint '{invalid[0].mimic.joint}': {len(invalid)} mimic(s) name a joint the model "
        f"does not have ({listed}); ignored, those joints are independent",
        file=where.file,
        line=where.line,
        element=where.element,
    )
    for joint in invalid:
        joint.mimic = None


def _check_mimic_cycles(description: ModelDescription) -> None:
    """Mimics that lead back to their own joint (``a`` mimics ``b`` mimics ``a``) cannot all hold."""
    leader = {joint.name: joint.mimic.joint for joint in description.joints if joint.mimic is not None}
    joints = {joint.name: joint for joint in description.joints}
    for start in leader:
        chain = [start]
        while chain[-1] in leader and leader[chain[-1]] not in chain:
            chain.append(leader[chain[-1]])
        if chain[-1] in leader and leader[chain[-1]] == start:
            path = " -> ".join(f"'{name}'" for name in chain + [start])
            raise _fail(description, joints[start].location, f"mimic joints form a cycle ({path}): no joint leads them")


def _check_inertial(description: ModelDescription, where: SourceLocation, inertial: Inertial) -> None:
    mass = float(inertial.mass)
    if not math.isfinite(mass):
        raise _fail(description, where, f"non-finite mass {mass}")
    if mass < 0.0:
        raise _fail(description, where, f"negative mass {mass}")
    _check_transform(description, where, "inertial origin", inertial.L_H_I)
    inertia = np.asarray(inertial.inertia, dtype=float)
    if inertia.shape != (3, 3) or not np.isfinite(inertia).all():
        raise _fail(description, where, "inertia is not a finite 3x3 matrix")
    tolerance = _RELATIVE_TOLERANCE * float(np.abs(inertia).max())
    if np.abs(inertia - inertia.T).max() > tolerance:
        raise _fail(description, where, "inertia matrix is not symmetric")


def validate_description(description: ModelDescription) -> None:
    """Raise :class:`ModelLoadError` at the first inconsistency of ``description``.

    Checks unique names, existing parent and child links, one parent per link, no loops,
    a single root, no floating or planar joint inside the tree, finite rigid poses, unit
    axes, limits and dynamics, inertials that are finite, symmetric and of non-negative
    mass, and some mass in a model with a free base. Whether inertias are physically
    consistent is checked on the bodies left after fixed-joint lumping, when the model is
    built (:mod:`jaxsim_like.dynamics.consistency`). A mimic naming a missing joint (or its
    own) is dropped with a :class:`ModelLoadWarning`: the joint is then independent; mimics
    that form a cycle are an error.
    """
    _check_names(description)
    parent_joint = _check_topology(description)
    model = SourceLocation(file=description.source, element=f'<model name="{description.name}">')
    root = next(link for link in description.links if link.name not in parent_joint)
    _check_transform(description, root.location, "root pose", description.M_H_root)
    _check_transform(description, model, "model pose", description.W_H_M)
    for joint in description.joints:
        _check_joint(description, joint)
    _drop_invalid_mimics(description)
    _check_mimic_cycles(description)
    for link in description.links:
        if link.inertial is not None:
            _check_inertial(description, link.location, link.inertial)
        for collision in link.collisions:
            _check_transform(description, collision.location, "collision origin", collision.L_H_G)
    for frame in description.frames:
        _check_transform(description, frame.location, "frame pose", frame.L_H_F)
    free = not (description.fixed_to_world or description.static)
    if free and all(link.inertial is None or link.inertial.mass <= 0.0 for link in description.links):
        raise _fail(description, root.location, f"link '{root.name}' is moved by the free base but the model has zero mass")
