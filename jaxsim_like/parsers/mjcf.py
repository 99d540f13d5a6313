"""MJCF (MuJoCo's XML) through MuJoCo's own compiler: the optional ``mujoco`` package
(``pip install jaxsim_like[mjcf]``) compiles the file, and the compiled ``MjModel`` is read into
a :class:`ModelDescription`, so that includes, defaults, ``<compiler>`` settings (angles, frames,
``inertiafromgeom``) and meshes mean exactly what MuJoCo makes of them.

What is read:

- the body tree. One body with a ``free`` joint under the world is a floating base; otherwise
  the root is the world body, as a massless link ``world`` welded to the world, with the bodies
  under it (a single body without joints is the welded root itself);
- ``hinge`` and ``slide`` joints, in MuJoCo's order. A body with several joints becomes a chain
  of massless links ``body::joint`` (one per joint but the last), each joint's axis and anchor
  in the body frame as MuJoCo applies them, one after the other. Joint positions are measured
  from MuJoCo's ``qpos0`` (the joints' ``ref``): ``q = qpos - qpos0``;
- joint ranges (of limited joints, minus ``qpos0``), damping, ``frictionloss`` (as Coulomb
  friction), ``armature`` (``Model.joint_armature``) and ``actuatorfrcrange`` (as effort limit);
- body inertias as compiled (including those MuJoCo infers from geoms);
- geoms that collide (``contype`` or ``conaffinity`` non-zero) of the bodies as collision shapes:
  sphere, capsule, ellipsoid, cylinder, box, plane, and meshes with MuJoCo's vertices; the
  world body's geoms (floors) are left out;
- named sites as frames.

What the model cannot represent raises :class:`ModelLoadError` naming it: ball joints, tendons,
equality constraints, free joints below the world's children and several free bodies. Joint
stiffness (springs) is not represented and warns. Actuators, sensors, contacts options and
gravity are not read (the dynamics take gravity as an argument). Locations name the file and
the element; lines are those of the main file's elements.
"""

from __future__ import annotations

import os

import numpy as np

from .description import (
    Collision,
    FrameDescription,
    Geometry,
    Inertial,
    JointDescription,
    JointLimits,
    LinkDescription,
    ModelDescription,
    SourceLocation,
)
from .errors import ModelLoadError, warn
from .sdf_values import quaternion_to_rotation
from .validate import validate_description
from .xml import load_xml, looks_like_xml

WORLD = "world"
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_SHAPES = {2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box", 7: "mesh", 0: "plane"}


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ImportError("loading MJCF needs MuJoCo: pip install 'jaxsim_like[mjcf]' (the mujoco package)") from None
    return mujoco


def _pose(position, quaternion_wxyz) -> np.ndarray:
    H = np.eye(4)
    w, x, y, z = (float(v) for v in quaternion_wxyz)
    H[:3, :3] = quaternion_to_rotation(x, y, z, w)
    H[:3, 3] = np.asarray(position, dtype=float)
    return H


class _Reader:
    """Names and locations of one compiled model's objects."""

    def __init__(self, mujoco, model, file: str | None, lines: dict[tuple[str, str | None], int]) -> None:
        self.mujoco, self.m, self.file, self.lines = mujoco, model, file, lines

    def name(self, kind: str, index: int) -> str:
        obj = getattr(self.mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
        return self.mujoco.mj_id2name(self.m, obj, index) or ""

    def body(self, index: int) -> str:
        return WORLD if index == 0 else self.name("body", index) or f"body{index}"

    def joint(self, index: int) -> str:
        return self.name("joint", index) or f"joint{index}"

    def where(self, tag: str, name: str) -> SourceLocation:
        return SourceLocation(file=self.file, line=self.lines.get((tag, name)), element=f'<{tag} name="{name}">')

    def error(self, tag: str, name: str, message: str) -> ModelLoadError:
        where = self.where(tag, name)
        return ModelLoadError(message, file=where.file, line=where.line, element=where.element)


def _unsupported(reader: _Reader) -> None:
    m = reader.m
    for kind, tag, count, what in (("tendon", "tendon", m.ntendon, "tendons"), ("equality", "equality", m.neq, "equality constraints")):
        if count:
            names = ", ".join(f"'{reader.name(kind, i)}'" if reader.name(kind, i) else f"#{i}" for i in range(count))
            raise ModelLoadError(
                f"{what} are not supported: {count} ({names})", file=reader.file, line=reader.lines.get((tag, None)), element=f"<{tag}>"
            )
    for j in range(m.njnt):
        if m.jnt_type[j] == _BALL:
            raise reader.error("joint", reader.joint(j), f"ball joint '{reader.joint(j)}' is not supported")
        if m.jnt_type[j] == _FREE and m.body_parentid[m.jnt_bodyid[j]] != 0:
            body = reader.body(m.jnt_bodyid[j])
            raise reader.error("body", body, f"free joint '{reader.joint(j)}' of body '{body}' below another body is not supported")
    springs = [j for j in range(m.njnt) if m.jnt_stiffness[j] > 0.0]
    if springs:
        where = reader.where("joint", reader.joint(springs[0]))
        listed = ", ".join(f"'{reader.joint(j)}' ({m.jnt_stiffness[j]:g})" for j in springs)
        warn(
            f"joint stiffness (springs) is not represented: ignored on {len(springs)} joint(s) {listed}",
            file=where.file,
            line=where.line,
            element=where.element,
        )


def _inertial(m, b: int) -> Inertial:
    return Inertial(mass=float(m.body_mass[b]), L_H_I=_pose(m.body_ipos[b], m.body_iquat[b]), inertia=np.diag(m.body_inertia[b]))


def _geometry(reader: _Reader, g: int) -> Geometry | None:
    m = reader.m
    kind = _SHAPES.get(int(m.geom_type[g]))
    size = np.asarray(m.geom_size[g], dtype=float)
    if kind is None:
        return None
    if kind == "sphere":
        return Geometry("sphere", radius=size[0])
    if kind in ("capsule", "cylinder"):
        return Geometry(kind, radius=size[0], length=2.0 * size[1])
    if kind == "ellipsoid":
        return Geometry("ellipsoid", size=tuple(size))
    if kind == "box":
        return Geometry("box", size=tuple(2.0 * size))
    if kind == "plane":
        return Geometry("plane", size=tuple(2.0 * size[:2]))
    mesh = int(m.geom_dataid[g])
    start, count = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
    name = reader.name("mesh", mesh) or f"mesh{mesh}"
    return Geometry("mesh", uri=name, vertices=np.array(m.mesh_vert[start : start + count], dtype=float))


def _link(reader: _Reader, b: int) -> LinkDescription:
    m, name = reader.m, reader.body(b)
    collisions = []
    first = int(m.body_geomadr[b])
    for g in range(first, first + int(m.body_geomnum[b])):
        if not (m.geom_contype[g] or m.geom_conaffinity[g]):
            continue
        geometry = _geometry(reader, g)
        if geometry is None:
            continue
        label = reader.name("geom", g) or f"{name}_geom{g}"
        collisions.append(Collision(label, _pose(m.geom_pos[g], m.geom_quat[g]), geometry, location=reader.where("geom", label)))
    inertial = _inertial(m, b) if m.body_mass[b] > 0.0 or np.any(m.body_inertia[b] > 0.0) else None
    return LinkDescription(name=name, inertial=inertial, collisions=collisions, location=reader.where("body", name))


def _joint(reader: _Reader, j: int, parent: str, child: str, P_H_C: np.ndarray) -> JointDescription:
    m = reader.m
    name, dof, address = reader.joint(j), int(m.jnt_dofadr[j]), int(m.jnt_qposadr[j])
    qpos0 = float(m.qpos0[address])
    lower, upper = (float(m.jnt_range[j][0]) - qpos0, float(m.jnt_range[j][1]) - qpos0) if m.jnt_limited[j] else (-np.inf, np.inf)
    effort = float(np.abs(m.jnt_actfrcrange[j]).max()) if m.jnt_actfrclimited[j] else np.inf
    axis = np.asarray(m.jnt_axis[j], dtype=float)
    return JointDescription(
        name=name,
        type="revolute" if m.jnt_type[j] == _HINGE else "prismatic",
        parent=parent,
        child=child,
        P_H_C=P_H_C,
        axis=axis / np.linalg.norm(axis),
        axis_point=np.asarray(m.jnt_pos[j], dtype=float) if m.jnt_type[j] == _HINGE else np.zeros(3),
        limits=JointLimits(lower=lower, upper=upper, effort=effort),
        damping=float(m.dof_damping[dof]),
        friction=float(m.dof_frictionloss[dof]),
        armature=float(m.dof_armature[dof]),
        location=reader.where("joint", name),
    )


def _lines(root) -> dict[tuple[str, str | None], int]:
    """The line of each element of the main file, by (tag, name); unnamed ones by (tag, None), the first."""
    lines: dict[tuple[str, str | None], int] = {}
    for element in root.iter():
        if isinstance(element.tag, str):
            lines.setdefault((element.tag, element.get("name")), element.sourceline)
    return lines


def _compile(mujoco, source: str | os.PathLike):
    try:
        if looks_like_xml(source):
            return mujoco.MjModel.from_xml_string(source)
        return mujoco.MjModel.from_xml_path(os.fspath(source))
    except ValueError as error:
        raise ModelLoadError(f"MuJoCo could not compile the model: {error}", file=None if looks_like_xml(source) else os.fspath(source)) from None


def _root(reader: _Reader) -> tuple[int, np.ndarray, bool]:
    """The root body (0: the world), its pose in the model frame and whether it is free."""
    m = reader.m
    world_children = [b for b in range(1, m.nbody) if m.body_parentid[b] == 0]
    free = [b for b in world_children if m.body_jntnum[b] and m.jnt_type[m.body_jntadr[b]] == _FREE]
    if free and len(world_children) > 1:
        names = ", ".join(f"'{reader.body(b)}'" for b in world_children)
        raise reader.error("body", reader.body(free[0]), f"a free body among several bodies under the world ({names}): load one model per tree")
    if free or (len(world_children) == 1 and not m.body_jntnum[world_children[0]]):
        root = world_children[0]
        return root, _pose(m.body_pos[root], m.body_quat[root]), bool(free)
    return 0, np.eye(4), False


def _body_joints(reader: _Reader, b: int) -> tuple[list[LinkDescription], list[JointDescription]]:
    """The joints from body ``b``'s parent to it, through one massless link per joint but the last."""
    m, name = reader.m, reader.body(b)
    parent, P_H_C = reader.body(m.body_parentid[b]), _pose(m.body_pos[b], m.body_quat[b])
    ids = [int(m.body_jntadr[b]) + k for k in range(int(m.body_jntnum[b]))]
    if not ids:
        return [], [JointDescription(f"{name}_weld", "fixed", parent, name, P_H_C=P_H_C, location=reader.where("body", name))]
    links, joints = [], []
    for k, j in enumerate(ids):
        child = name if k == len(ids) - 1 else f"{name}::{reader.joint(j)}"
        if child != name:
            links.append(LinkDescription(name=child, location=reader.where("joint", reader.joint(j))))
        joints.append(_joint(reader, j, parent, child, P_H_C))
        parent, P_H_C = child, np.eye(4)
    return links, joints


def parse_mjcf(source: str | os.PathLike) -> ModelDescription:
    """A validated :class:`ModelDescription` of an MJCF path or XML string (see the module docstring).

    Raises :class:`ModelLoadError` for what MuJoCo cannot compile and what the model cannot
    represent, ImportError without the ``mujoco`` package.
    """
    mujoco = _mujoco()
    document = load_xml(source)
    file = document.file
    m = _compile(mujoco, source)
    reader = _Reader(mujoco, m, file, _lines(document.root))
    _unsupported(reader)
    root, M_H_root, free = _root(reader)
    links = [LinkDescription(name=WORLD, location=reader.where("worldbody", WORLD))] if root == 0 else []
    joints: list[JointDescription] = []
    for b in range(1, m.nbody):  # the root is the world or its only child: every body is in the tree
        links.append(_link(reader, b))
        if b != root:
            extra_links, body_joints = _body_joints(reader, b)
            links += extra_links
            joints += body_joints
    frames = [
        FrameDescription(name, reader.body(m.site_bodyid[s]), _pose(m.site_pos[s], m.site_quat[s]), location=reader.where("site", name))
        for s in range(m.nsite)
        if (name := reader.name("site", s)) and (m.site_bodyid[s] != 0 or root == 0)
    ]
    description = ModelDescription(
        name=document.root.get("model") or (os.path.splitext(os.path.basename(file))[0] if file else "mjcf"),
        links=links,
        joints=joints,
        frames=frames,
        root=reader.body(root),
        M_H_root=M_H_root,
        fixed_to_world=not free,
        source=file,
    )
    validate_description(description)
    return description
