"""MJCF (MuJoCo's XML) through MuJoCo's own compiler: the optional ``mujoco`` package
(``pip install jaxsim_like[mjcf]``) compiles the file, and the compiled ``MjModel`` is read into
a :class:`ModelDescription`, so that includes, defaults, ``<compiler>`` settings (angles, frames,
``inertiafromgeom``) and meshes mean exactly what MuJoCo makes of them.

What is read:

- the body trees. Each body with a ``free`` joint under the world is a tree with a floating base;
  the other bodies under the world make one tree whose root is the world body, as a massless link
  ``world`` welded to the world (a single body without joints is the welded root itself).
  :func:`parse_mjcf` gives the largest tree (with a warning naming it when there are several),
  :func:`parse_mjcf_world` all of them as the models of a world, with ``<option>``'s gravity,
  timestep and the nearest integrator;
- ``hinge``, ``slide`` and ``ball`` joints, in MuJoCo's order (a ball's position is its ``qpos``
  quaternion, its velocity the angular velocity in the body frame, see
  :mod:`jaxsim_like.dynamics.configuration`; its damping, armature and friction loss act on each
  of its three degrees of freedom, its stiffness pulls towards the identity). A body with several joints becomes a chain
  of massless links ``body::joint`` (one per joint but the last), each joint's axis and anchor
  in the body frame as MuJoCo applies them, one after the other. Joint positions are measured
  from MuJoCo's ``qpos0`` (the joints' ``ref``): ``q = qpos - qpos0``;
- the range of a limited ball joint as its cone limit (:class:`BallCone`: MuJoCo's ball limit on
  the rotation angle, the larger end of the range, with the joint's ``margin``, ``solreflimit``,
  ``solimplimit`` and the compiled ``dof_invweight0``);
- joint ranges (of limited joints, minus ``qpos0``) of hinges and slides as MuJoCo's soft
  limits (:class:`SoftLimit`: the joint's ``margin``, ``solreflimit``, ``solimplimit`` and the
  compiled ``dof_invweight0``; the step holds them as constraint rows, see
  :mod:`jaxsim_like.simulation.joint_limits`, where URDF and SDF limits are spring-dampers; a
  range narrower than twice its margin warns), damping, ``frictionloss`` (as Coulomb
  friction), ``armature`` (``Model.joint_armature``), ``stiffness`` towards ``springref`` (joint
  springs, the reference minus ``qpos0``) and ``actuatorfrcrange`` (as effort limit);
- body inertias as compiled (including those MuJoCo infers from geoms);
- geoms that collide (``contype`` or ``conaffinity`` non-zero) or that a contact pair names, of
  the bodies, as collision shapes named after the geom: sphere, capsule, ellipsoid, cylinder,
  box, plane, and meshes with MuJoCo's vertices; the world body's geoms (floors) are left out,
  and every geom where ``<option><flag>`` disables contacts or constraints (``contact="disable"``,
  ``constraint="disable"``);
- which of them touch, as :class:`CollisionRules` shared by every tree of the file (see
  :mod:`.mjcf_contacts`): the ``contype``/``conaffinity`` masks, MuJoCo's parent filter on
  welded bodies (``filterparent``), the excludes ``<contact><exclude body1 body2>``, the
  explicit pairs ``<contact><pair>`` with their friction (the first coefficient), margin and
  gap, the geoms' own friction, margin and gap, and the world body's planes as the terrain
  (pairs with them included);
- named sites as frames. Bodies, sites and geoms have separate namespaces, as in MuJoCo: a site
  named like a link is the frame ``name::site``;
- joint equalities ``<equality><joint joint1="a" joint2="b" polycoef="c0 c1 0 0 0"/>`` as joint
  couplings (:class:`Mimic` of ``a``): MuJoCo's rule ``qpos_a - qpos0_a = c0 + c1 (qpos_b -
  qpos0_b)`` is, in positions measured from ``qpos0``, ``q_a = c1 q_b + c0``; without ``joint2``,
  ``q_a = c0`` (a welded leader). The equality's ``solref`` becomes the coupling's time constant
  and damping ratio (see :func:`_reference`), its ``solimp`` the coupling's impedance, with the
  compiled ``dof_invweight0`` of its joints; inactive equalities are skipped with a warning;
- fixed tendons ``<tendon><fixed>`` (:class:`TendonDescription`): coefficients by joint, the
  length at ``qpos0``, stiffness with MuJoCo's compiled ``springlength`` dead band (its ``-1``
  default resolved by the compiler to the length at ``qpos0``), damping, friction loss,
  armature, range, margin, ``solreflimit``, ``solimplimit`` and the compiled ``tendon_invweight0``; tendon equalities ``<equality><tendon
  tendon1="a" tendon2="b" polycoef="c0 c1 0 0 0"/>`` (:class:`TendonEqualityDescription`):
  MuJoCo's ``L_a - L_a0 = c0 + c1 (L_b - L_b0)``, without ``tendon2`` ``L_a - L_a0 = c0``, with
  their ``solref``, ``solimp`` and the compiled ``tendon_invweight0`` of their tendons;
- spatial tendons ``<tendon><spatial>`` through sites and pulleys, wrapping around spheres and
  cylinders: their segments between consecutive sites, or between the sites on either side of
  a wrapping geom (:class:`TendonSegment`, :class:`TendonWrap`; each counted ``1 / divisor`` of
  the pulley before it), with the fixed tendons' passive forces, limits and motors;
- the medium of ``<option density viscosity wind>`` (:class:`FluidDescription`), on the bodies
  with mass: MuJoCo's inertia-box fluid model, or its ellipsoid model on the geoms of
  ``fluidshape="ellipsoid"`` (:class:`FluidGeomDescription`, with ``fluidcoef``);
- connect and weld equalities (between bodies or sites, ``relpose``, ``torquescale``, ``solref``,
  ``solimp`` with the compiled ``body_invweight0`` of their bodies) as loop closures
  (:class:`LoopClosure`, see :func:`_loops`), on the tree of their bodies; between bodies of
  two trees, closures of the world (:class:`WorldClosure` of :func:`parse_mjcf_world`);
- mocap bodies (``mocap="true"``) as moving frames of the world (:class:`MocapBody`, see
  :func:`_mocap_bodies`): no tree's, their pose in the file the default of an input of the step;
  the closures that name one hold on it, and belong to the tree of their other body; a mocap
  body whose geoms collide is also a model of its own (:func:`_trees`): one link fixed at its
  pose, which its state's base pose sets (a kinematic body, at rest for the contacts, as MuJoCo
  takes a mocap body's velocity).

What the model cannot represent raises one :class:`ModelLoadError` listing all of it: spatial
tendons wrapping with side sites, tendons and joint or tendon equalities across trees, equality
constraints other than linear joint and tendon equalities (and those on spatial tendons),
connects and welds that hold no moving body (between the world and mocap bodies), mocap bodies
that carry bodies and tendons through their sites, flexes (each with its line). What a contact
pair says that the contact law here cannot (see :mod:`.mjcf_contacts`) and what MuJoCo would
simulate and the model leaves out (see :mod:`.mjcf_omissions`: the world's geoms other than its
floors, a floor off z = 0, height fields and signed distance fields, surface velocities, plugins,
gravity compensation, free joints' damping) warn, as do the limits and equalities of a file
that disables constraints (enforced here). Motor, position
and velocity actuators on joints (ball joints included, see :mod:`.mjcf_actuators`) and motors
on tendons are read (others warn and are dropped); sensors and contact options are not read.
Locations name the file and the element; lines are those of the main file's elements.
"""

from __future__ import annotations

import os

import numpy as np

from .description import (
    BallCone,
    Collision,
    CollisionRules,
    FluidDescription,
    FluidGeomDescription,
    FrameDescription,
    Geometry,
    Inertial,
    JointDescription,
    JointLimits,
    LinkDescription,
    LoopClosure,
    Mimic,
    MocapBody,
    ModelDescription,
    PhysicsDescription,
    SoftLimit,
    SourceLocation,
    TendonDescription,
    TendonEqualityDescription,
    TendonSegment,
    TendonWrap,
    WorldClosure,
    WorldDescription,
)
from .errors import ModelLoadError, warn
from .mjcf_actuators import read_actuators, warn_unrepresented
from .mjcf_contacts import collision_rules, geom_label, paired_geoms
from .mjcf_omissions import flex_problems, warn_left_out
from .mjcf_terrain import mujoco_pose, world_terrain
from .validate import validate_description
from .xml import load_xml, looks_like_xml

WORLD = "world"
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_EULER, _RK4 = 0, 1
_INTEGRATORS = {0: "semi_implicit_euler", 1: "rk4", 2: "implicit_euler", 3: "implicit_euler"}  # by mjtIntegrator
_CONNECT, _WELD, _JOINT_EQUALITY, _TENDON_EQUALITY = 0, 1, 2, 3  # mjtEq
_SITE = 6  # mjtObj: an equality between sites (else bodies)
_WRAP_JOINT, _WRAP_PULLEY, _WRAP_SITE = 1, 2, 3  # mjtWrap: fixed tendons' joints; spatial tendons' pulleys and sites
_WRAPS = {4: "sphere", 5: "cylinder"}  # mjtWrap: the geoms a spatial tendon wraps around
_MINVAL = 1e-15  # MuJoCo's mjMINVAL: a body lighter than this feels no fluid
_SPHERE, _CAPSULE, _CYLINDER = 2, 3, 5  # mjtGeom
_SHAPES = {2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box", 7: "mesh", 0: "plane"}


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ImportError("loading MJCF needs MuJoCo: pip install 'jaxsim_like[mjcf]' (the mujoco package)") from None
    return mujoco


class _Reader:
    """Names and locations of one compiled model's objects."""

    def __init__(self, mujoco, model, file: str | None, root) -> None:
        self.mujoco, self.m, self.file, self.root, self.lines = mujoco, model, file, root, _lines(root)
        # The actuator elements of the main file in order, (tag, line): MuJoCo's order when all are there.
        elements = [(child.tag, child.sourceline) for section in root.iter("actuator") for child in section if isinstance(child.tag, str)]
        self.actuator_elements = elements if len(elements) == model.nu else None
        equalities = [child for section in root.iter("equality") for child in section if isinstance(child.tag, str)]
        self.equality_elements = equalities if len(equalities) == model.neq else None
        self.mimics: dict[str, Mimic] = {}  # the joint equalities, by follower (see _mimics)
        self.loops: list[tuple[tuple[int, int], LoopClosure]] = []  # connects and welds with their bodies (see _loops)
        self.collisions: set[int] = set()  # the geoms read as collisions (see _collisions)
        self.rules: CollisionRules | None = None  # which of them touch (see .mjcf_contacts)

    def name(self, kind: str, index: int) -> str:
        obj = getattr(self.mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
        return self.mujoco.mj_id2name(self.m, obj, index) or ""

    def unnamed(self, kind: str, index: int) -> str:
        """The name of unnamed element ``index`` of ``kind``: ``kind{index}``, with underscores
        appended while the file names another element so."""
        obj = getattr(self.mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
        name = f"{kind}{index}"
        while self.mujoco.mj_name2id(self.m, obj, name) >= 0:
            name += "_"
        return name

    def body(self, index: int) -> str:
        return WORLD if index == 0 else self.name("body", index) or self.unnamed("body", index)

    def joint(self, index: int) -> str:
        return self.name("joint", index) or self.unnamed("joint", index)

    def tendon(self, index: int) -> str:
        return self.name("tendon", index) or self.unnamed("tendon", index)

    def tendon_where(self, index: int) -> SourceLocation:
        """The location of tendon ``index``: its ``<fixed>`` or ``<spatial>`` element by name, else
        the file's first ``<tendon>``."""
        name = self.name("tendon", index)
        tag = "fixed" if _is_fixed(self.m, index) else "spatial"
        if name and (tag, name) in self.lines:
            return SourceLocation(file=self.file, line=self.lines[(tag, name)], element=f'<{tag} name="{name}">')
        return SourceLocation(file=self.file, line=self.lines.get(("tendon", None)), element=f"<{tag}>")

    def where(self, tag: str, name: str) -> SourceLocation:
        return SourceLocation(file=self.file, line=self.lines.get((tag, name)), element=f'<{tag} name="{name}">')

    def equality(self, e: int) -> tuple[str, SourceLocation]:
        """The label (``'name'`` or ``#e``) and location of equality ``e``: its element of the main
        file when the file's equality elements are MuJoCo's, else its kind by name."""
        name = self.name("equality", e)
        label = f"'{name}'" if name else f"#{e}"
        if self.equality_elements is not None:
            element = self.equality_elements[e]
            named = f' name="{name}"' if name else ""
            return label, SourceLocation(file=self.file, line=element.sourceline, element=f"<{element.tag}{named}>")
        tag = self.mujoco.mjtEq(int(self.m.eq_type[e])).name.removeprefix("mjEQ_").lower()
        return label, SourceLocation(file=self.file, line=self.lines.get((tag, name or None)), element=f"<{tag}>")

    def error(self, tag: str, name: str, message: str) -> ModelLoadError:
        where = self.where(tag, name)
        return ModelLoadError(message, file=where.file, line=where.line, element=where.element)


def _line(where: SourceLocation) -> str:
    return f"line {where.line}, " if where.line is not None else ""


def _tree_key(m, body: int) -> int:
    """The tree of ``body`` (see :func:`_trees`): its free root body, or 0 for the bodies welded
    or jointed to the world."""
    root = int(m.body_rootid[body])
    return root if root and _is_free(m, root) else 0


def _is_mocap(m, body: int) -> bool:
    """Whether ``body`` is a mocap body (a moving frame of the world, see :func:`_mocap_bodies`)."""
    return int(m.body_mocapid[body]) >= 0


def _is_fixed(m, t: int) -> bool:
    """Whether tendon ``t`` is fixed (joints only), not spatial."""
    wraps = range(int(m.tendon_adr[t]), int(m.tendon_adr[t]) + int(m.tendon_num[t]))
    return all(int(m.wrap_type[w]) == _WRAP_JOINT for w in wraps)


def _tendon_joints(m, t: int) -> list[tuple[int, float]]:
    """The (joint id, coefficient) pairs of fixed tendon ``t``."""
    wraps = range(int(m.tendon_adr[t]), int(m.tendon_adr[t]) + int(m.tendon_num[t]))
    return [(int(m.wrap_objid[w]), float(m.wrap_prm[w])) for w in wraps]


def _tendon_bodies(m, t: int) -> list[int]:
    """The bodies tendon ``t`` moves with: its joints' (fixed), its sites' (spatial)."""
    wraps = range(int(m.tendon_adr[t]), int(m.tendon_adr[t]) + int(m.tendon_num[t]))
    if _is_fixed(m, t):
        return [int(m.jnt_bodyid[j]) for j, _ in _tendon_joints(m, t)]
    sites = [int(m.site_bodyid[m.wrap_objid[w]]) for w in wraps if m.wrap_type[w] == _WRAP_SITE]
    return sites + [int(m.geom_bodyid[m.wrap_objid[w]]) for w in wraps if int(m.wrap_type[w]) in _WRAPS]


def _tendon_tree(m, t: int) -> int | None:
    """The tree (see :func:`_tree_key`) of tendon ``t``'s joints or sites; None across trees."""
    trees = {_tree_key(m, b) for b in _tendon_bodies(m, t)}
    return trees.pop() if len(trees) == 1 else None


def _tendon_problems(reader: _Reader) -> list[tuple[SourceLocation, str]]:
    """The tendons the model cannot represent: spatial ones wrapping around geoms, tendons across
    trees."""
    m, problems = reader.m, []
    for t in range(m.ntendon):
        label = f"'{reader.tendon(t)}'"
        kind = "fixed" if _is_fixed(m, t) else "spatial"
        wraps = range(int(m.tendon_adr[t]), int(m.tendon_adr[t]) + int(m.tendon_num[t]))
        for w in wraps:
            if int(m.wrap_type[w]) in _WRAPS and m.wrap_prm[w] >= 0:
                geom = reader.name("geom", int(m.wrap_objid[w])) or f"#{int(m.wrap_objid[w])}"
                side = reader.name("site", int(m.wrap_prm[w])) or f"#{int(m.wrap_prm[w])}"
                message = f"spatial tendon {label} wraps around geom '{geom}' with the side site '{side}': side sites are not supported yet"
                problems.append((reader.tendon_where(t), message))
        if m.tendon_num[t] and _tendon_tree(m, t) is None:
            problems.append((reader.tendon_where(t), f"{kind} tendon {label} across bodies of two trees is not supported yet"))
        mocap = [reader.body(b) for b in _tendon_bodies(m, t) if _is_mocap(m, b)]
        if mocap:
            problems.append((reader.tendon_where(t), f"{kind} tendon {label} through mocap body '{mocap[0]}' is not supported yet"))
    return problems


def _mocap_problems(reader: _Reader) -> list[tuple[SourceLocation, str]]:
    """The mocap bodies the model cannot represent: those that carry other bodies."""
    m, problems = reader.m, []
    for b in range(1, m.nbody):
        if _is_mocap(m, b):
            children = [reader.body(c) for c in range(1, m.nbody) if m.body_parentid[c] == b]
            if children:
                message = f"mocap body '{reader.body(b)}' carries bodies ({', '.join(repr(c) for c in children)}): not supported yet"
                problems.append((reader.where("body", reader.body(b)), message))
    return problems


def _equality_problems(reader: _Reader) -> list[tuple[SourceLocation, str]]:
    """The active equalities the model cannot represent: other kinds than joint and tendon
    equalities, nonlinear polynomials, joints or tendons of two trees, a joint that follows two
    equalities; warns about (and skips) the inactive ones."""
    m = reader.m
    problems, followers = [], {}
    for e in range(m.neq):
        label, where = reader.equality(e)
        if not m.eq_active0[e]:
            warn(f"equality {label} is inactive (active=\"false\"): skipped", file=where.file, line=where.line, element=where.element)
            continue
        kind = reader.mujoco.mjtEq(int(m.eq_type[e])).name.removeprefix("mjEQ_").lower()
        if m.eq_type[e] in (_CONNECT, _WELD):
            moving = [b for b in _equality_bodies(m, e) if b and not _is_mocap(m, b)]
            if not moving:
                names = "', '".join(reader.body(b) for b in _equality_bodies(m, e))
                problems.append((where, f"{kind} equality {label} holds no moving body ('{names}': the world or mocap bodies)"))
            continue
        if m.eq_type[e] == _TENDON_EQUALITY:
            problems += _tendon_equality_problems(reader, e, label, where)
            continue
        if m.eq_type[e] != _JOINT_EQUALITY:
            problems.append((where, f"{kind} equality {label} is not supported yet"))
            continue
        a, b = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        coefficients = np.asarray(m.eq_data[e][:5], dtype=float)
        if np.any(coefficients[2:] != 0.0):
            polycoef = " ".join(f"{c:g}" for c in coefficients)
            problems.append((where, f"joint equality {label} with a nonlinear polycoef ({polycoef}) is not supported yet"))
        elif b >= 0 and _tree_key(m, int(m.jnt_bodyid[a])) != _tree_key(m, int(m.jnt_bodyid[b])):
            problems.append((where, f"joint equality {label} between joints of two trees is not supported yet"))
        elif a in followers:
            problems.append((where, f"joint '{reader.joint(a)}' is joint1 of two joint equalities ({followers[a]}, {label}): not supported yet"))
        followers.setdefault(a, label)
    return problems


def _equality_bodies(m, e: int) -> tuple[int, int]:
    """The bodies of a connect or weld equality ``e`` (0: the world): its objects', or its sites' bodies."""
    objects = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
    if m.eq_objtype[e] == _SITE:
        return tuple(int(m.site_bodyid[s]) for s in objects)
    return objects


def _loops(reader: _Reader) -> list[tuple[tuple[int, int], LoopClosure]]:
    """The active connect and weld equalities as :class:`LoopClosure` (world: an empty link name),
    each with its two bodies. Bodies: a connect's ``eq_data`` holds its anchor in each body; a
    weld's the anchor in body2, then the relative pose of body1 (position, quaternion) and the
    torque scale, and MuJoCo holds ``body1 * relpose`` on ``body2 * anchor`` (see
    ``mj_instantiateEquality``). Sites: their frames. A mocap body's side is named after it
    (see :func:`_mocap_bodies`)."""
    m, loops = reader.m, []
    for e in range(m.neq):
        if not m.eq_active0[e] or m.eq_type[e] not in (_CONNECT, _WELD):
            continue
        label, where = reader.equality(e)
        data = np.asarray(m.eq_data[e], dtype=float)
        weld = m.eq_type[e] == _WELD
        bodies = _equality_bodies(m, e)
        if m.eq_objtype[e] == _SITE:
            sites = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            frames = tuple(mujoco_pose(m.site_pos[site], m.site_quat[site]) for site in sites)
        elif weld:
            frames = mujoco_pose(data[3:6], data[6:10]), mujoco_pose(data[0:3], (1.0, 0.0, 0.0, 0.0))
        else:
            frames = mujoco_pose(data[0:3], (1.0, 0.0, 0.0, 0.0)), mujoco_pose(data[3:6], (1.0, 0.0, 0.0, 0.0))
        time_constant, damping_ratio = _reference(m.eq_solref[e])
        links = tuple(reader.body(b) if b else "" for b in bodies)
        closure = LoopClosure(
            name=label.strip("'"),
            kind="weld" if weld else "connect",
            link1=links[0],
            link2=links[1],
            L1_H_F1=frames[0],
            L2_H_F2=frames[1],
            torque_scale=float(data[10]) if weld else 1.0,
            time_constant=time_constant,
            damping_ratio=damping_ratio,
            location=where,
            solimp=tuple(float(value) for value in m.eq_solimp[e]),
            inverse_weight=tuple(float(m.body_invweight0[bodies[0], k] + m.body_invweight0[bodies[1], k]) for k in range(2)),
        )
        loops.append((bodies, closure))
    return loops
def _tendon_equality_problems(reader: _Reader, e: int, label: str, where: SourceLocation) -> list[tuple[SourceLocation, str]]:
    """What tendon equality ``e`` asks that the model cannot represent: a nonlinear polynomial,
    a spatial tendon, tendons of two trees."""
    m = reader.m
    tendons = [int(t) for t in (m.eq_obj1id[e], m.eq_obj2id[e]) if t >= 0]
    coefficients = np.asarray(m.eq_data[e][:5], dtype=float)
    if np.any(coefficients[2:] != 0.0):
        polycoef = " ".join(f"{c:g}" for c in coefficients)
        return [(where, f"tendon equality {label} with a nonlinear polycoef ({polycoef}) is not supported yet")]
    if not all(_is_fixed(m, t) for t in tendons):
        return [(where, f"tendon equality {label} on a spatial tendon is not supported yet")]
    if len({_tendon_tree(m, t) for t in tendons}) > 1:
        return [(where, f"tendon equality {label} between tendons of two trees is not supported yet")]
    return []


def _segments(reader: _Reader, t: int, frames: dict[int, str]) -> list[TendonSegment]:
    """The segments of spatial tendon ``t`` between the frames of its sites (``frames`` by site
    id), as MuJoCo's ``mj_tendon`` takes them: between consecutive sites, or between the sites on
    either side of a sphere or cylinder (its wrap), each counted ``1 / divisor`` of the last
    pulley before it."""
    m, segments, scale = reader.m, [], 1.0
    wraps = list(range(int(m.tendon_adr[t]), int(m.tendon_adr[t]) + int(m.tendon_num[t])))
    for k, w in enumerate(wraps[:-1]):
        following = wraps[k + 1]
        if m.wrap_type[w] == _WRAP_PULLEY:
            scale = 1.0 / float(m.wrap_prm[w])
        elif m.wrap_type[w] == _WRAP_SITE and m.wrap_type[following] == _WRAP_SITE:
            segments.append(TendonSegment(frames[int(m.wrap_objid[w])], frames[int(m.wrap_objid[following])], scale))
        elif m.wrap_type[w] == _WRAP_SITE and int(m.wrap_type[following]) in _WRAPS:
            g = int(m.wrap_objid[following])
            wrap = TendonWrap(reader.body(int(m.geom_bodyid[g])), _WRAPS[int(m.wrap_type[following])], mujoco_pose(m.geom_pos[g], m.geom_quat[g]), float(m.geom_size[g][0]))
            segments.append(TendonSegment(frames[int(m.wrap_objid[w])], frames[int(m.wrap_objid[wraps[k + 2]])], scale, wrap))
    return segments


def _tendons(reader: _Reader, joints: set[str], bodies: set[int], frames: dict[int, str]) -> list[TendonDescription]:
    """The fixed tendons on the named ``joints`` and the spatial tendons through sites of
    ``bodies`` (their frames by site id, ``frames``), in MuJoCo's order (after :func:`_unsupported`)."""
    m, tendons = reader.m, []
    for t in range(m.ntendon):
        spatial = not _is_fixed(m, t)
        coefficients = {} if spatial else {reader.joint(j): coefficient for j, coefficient in _tendon_joints(m, t)}
        if spatial and not set(_tendon_bodies(m, t)) <= bodies:
            continue
        if not spatial and (not coefficients or not set(coefficients) <= joints):
            continue
        time_constant, damping_ratio = _reference(m.tendon_solref_lim[t])
        limited = bool(m.tendon_limited[t])
        tendons.append(
            TendonDescription(
                name=reader.tendon(t),
                coefficients=coefficients,
                length0=0.0 if spatial else float(m.tendon_length0[t]),
                stiffness=float(m.tendon_stiffness[t]),
                spring_length=(float(m.tendon_lengthspring[t][0]), float(m.tendon_lengthspring[t][1])),
                damping=float(m.tendon_damping[t]),
                friction=float(m.tendon_frictionloss[t]),
                armature=float(m.tendon_armature[t]),
                limited=limited,
                range=(float(m.tendon_range[t][0]), float(m.tendon_range[t][1])) if limited else (-np.inf, np.inf),
                margin=float(m.tendon_margin[t]),
                time_constant=time_constant,
                damping_ratio=damping_ratio,
                solimp=tuple(float(value) for value in m.tendon_solimp_lim[t]),
                inverse_weight=float(m.tendon_invweight0[t]),
                location=reader.tendon_where(t),
                segments=_segments(reader, t, frames) if spatial else [],
            )
        )
    return tendons


def _fluid(reader: _Reader, bodies: list[int]) -> FluidDescription | None:
    """The medium of ``<option>`` (None when it has neither density nor viscosity) on the
    ``bodies`` of a tree that have mass (MuJoCo skips lighter ones than ``mjMINVAL``): those with
    a geom of the ellipsoid model (``fluidshape="ellipsoid"``) through those geoms, the others
    through their inertia boxes (as MuJoCo's ``mj_fluid``)."""
    m, option = reader.m, reader.m.opt
    if not (option.density > 0.0 or option.viscosity > 0.0):
        return None
    boxes, geoms = [], []
    for b in bodies:
        if m.body_mass[b] < _MINVAL:
            continue
        own = range(int(m.body_geomadr[b]), int(m.body_geomadr[b] + m.body_geomnum[b]))
        ellipsoids = [g for g in own if m.geom_fluid[g][0] > 0.0]
        if not ellipsoids:
            boxes.append(reader.body(b))
        for g in ellipsoids:
            name = reader.name("geom", g) or f"geom{g}"
            fluid = np.array(m.geom_fluid[g], dtype=float)  # interaction, fluidcoef (5), virtual mass (3), inertia (3)
            geoms.append(
                FluidGeomDescription(
                    name=name,
                    body=reader.body(b),
                    B_H_G=mujoco_pose(m.geom_pos[g], m.geom_quat[g]),
                    semiaxes=_semiaxes(int(m.geom_type[g]), np.array(m.geom_size[g], dtype=float)),
                    coefficients=fluid[1:6],
                    interaction=float(fluid[0]),
                    virtual_mass=fluid[6:9],
                    virtual_inertia=fluid[9:12],
                    location=reader.where("geom", name),
                )
            )
    return FluidDescription(float(option.density), float(option.viscosity), np.array(option.wind, dtype=float), boxes, geoms)


def _semiaxes(kind: int, size: np.ndarray) -> np.ndarray:
    """``(3,)`` [m]: the semi-axes of the ellipsoid MuJoCo's fluid model puts on a geom of type
    ``kind`` (mjtGeom) and ``size (3,)``: a sphere's radius thrice, a capsule's radius twice and
    its half-length plus radius, a cylinder's radius twice and its half-length, else the size."""
    if kind == _SPHERE:
        return np.full(3, size[0])
    if kind == _CAPSULE:
        return np.array([size[0], size[0], size[1] + size[0]])
    if kind == _CYLINDER:
        return np.array([size[0], size[0], size[1]])
    return size.copy()


def _tendon_equalities(reader: _Reader, tendons: set[str]) -> list[TendonEqualityDescription]:
    """The active tendon equalities between the named ``tendons`` (after :func:`_unsupported`)."""
    m, equalities = reader.m, []
    for e in range(m.neq):
        if not m.eq_active0[e] or m.eq_type[e] != _TENDON_EQUALITY or reader.tendon(int(m.eq_obj1id[e])) not in tendons:
            continue
        second = int(m.eq_obj2id[e])
        time_constant, damping_ratio = _reference(m.eq_solref[e])
        label, where = reader.equality(e)
        equalities.append(
            TendonEqualityDescription(
                name=reader.name("equality", e) or label,
                tendon1=reader.tendon(int(m.eq_obj1id[e])),
                tendon2=reader.tendon(second) if second >= 0 else "",
                offset=float(m.eq_data[e][0]),
                multiplier=float(m.eq_data[e][1]) if second >= 0 else 0.0,
                time_constant=time_constant,
                damping_ratio=damping_ratio,
                location=where,
                solimp=tuple(float(value) for value in m.eq_solimp[e]),
                inverse_weight=sum(float(m.tendon_invweight0[t]) for t in (int(m.eq_obj1id[e]), second) if t >= 0),
            )
        )
    return equalities


def _reference(solref: np.ndarray) -> tuple[float, float]:
    """The coupling's (time constant [s], damping ratio) of an equality's ``solref``. MuJoCo's
    reference acceleration at an impedance of one is ``-(2 / t) v - r / (t z)^2`` for a positive
    ``solref (t, z)`` and ``-b v - k r`` for a negative one ``(-k, -b)``; the coupling's,
    ``-(2 zeta / tau) v - r / tau^2``, equals it with ``tau = t z, zeta = z``, or
    ``tau = 1 / sqrt(k), zeta = b tau / 2``."""
    first, second = float(solref[0]), float(solref[1])
    if first > 0.0:
        return first * second, second
    tau = 1.0 / np.sqrt(-first)
    return float(tau), -second * float(tau) / 2.0


def _mimics(reader: _Reader) -> dict[str, Mimic]:
    """The active joint equalities as mimics by follower (joint1) name (after :func:`_unsupported`)."""
    m, mimics = reader.m, {}
    for e in range(m.neq):
        if not m.eq_active0[e] or m.eq_type[e] != _JOINT_EQUALITY:
            continue
        a, b = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        c0, c1 = float(m.eq_data[e][0]), float(m.eq_data[e][1])
        time_constant, damping_ratio = _reference(m.eq_solref[e])
        leader, multiplier = (reader.joint(b), c1) if b >= 0 else ("", 0.0)
        solimp = tuple(float(value) for value in m.eq_solimp[e])
        inverse_weight = sum(float(m.dof_invweight0[m.jnt_dofadr[j]]) for j in (a, b) if j >= 0)
        mimics[reader.joint(a)] = Mimic(leader, multiplier, c0, time_constant, damping_ratio, solimp, inverse_weight)
    return mimics


def _unsupported(reader: _Reader) -> None:
    """Raise one :class:`ModelLoadError` listing everything the model cannot represent (located at
    the first, each other with its line); warn about inactive equalities."""
    m = reader.m
    problems = _tendon_problems(reader) + _equality_problems(reader) + _mocap_problems(reader) + flex_problems(reader)
    if problems:
        (first, reason), others = problems[0], problems[1:]
        listed = "".join(f"; {message} ({_line(where)}{where.element})" for where, message in others)
        total = f" [{len(problems)} unsupported elements]" if others else ""
        raise ModelLoadError(reason + listed + total, file=first.file, line=first.line, element=first.element)


def _inertial(m, b: int) -> Inertial:
    return Inertial(mass=float(m.body_mass[b]), L_H_I=mujoco_pose(m.body_ipos[b], m.body_iquat[b]), inertia=np.diag(m.body_inertia[b]))


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


def _contacts_off(reader: _Reader) -> bool:
    """Whether ``<option><flag contact="disable"/>`` or ``constraint="disable"`` turns every
    contact off (then no geom is a collision shape)."""
    bits = reader.mujoco.mjtDisableBit
    return bool(reader.m.opt.disableflags & (int(bits.mjDSBL_CONTACT) | int(bits.mjDSBL_CONSTRAINT)))


def _collisions(reader: _Reader) -> set[int]:
    """The geoms of the bodies (not the world's) read as collisions: those that collide (``contype``
    or ``conaffinity`` non-zero) or that a contact pair names, of a shape read here; none when
    the file disables contacts."""
    m = reader.m
    if _contacts_off(reader):
        return set()
    named = paired_geoms(m)
    return {
        g for g in range(m.ngeom)
        if m.geom_bodyid[g] and (m.geom_contype[g] or m.geom_conaffinity[g] or g in named) and int(m.geom_type[g]) in _SHAPES
    }


def _link(reader: _Reader, b: int) -> LinkDescription:
    m, name = reader.m, reader.body(b)
    collisions = []
    first = int(m.body_geomadr[b])
    for g in range(first, first + int(m.body_geomnum[b])):
        if g not in reader.collisions:
            continue
        label = geom_label(reader, g)
        collisions.append(Collision(label, mujoco_pose(m.geom_pos[g], m.geom_quat[g]), _geometry(reader, g), location=reader.where("geom", label)))
    inertial = _inertial(m, b) if m.body_mass[b] > 0.0 or np.any(m.body_inertia[b] > 0.0) else None
    return LinkDescription(name=name, inertial=inertial, collisions=collisions, location=reader.where("body", name))


def _joint(reader: _Reader, j: int, parent: str, child: str, P_H_C: np.ndarray) -> JointDescription:
    m = reader.m
    name, dof, address = reader.joint(j), int(m.jnt_dofadr[j]), int(m.jnt_qposadr[j])
    qpos0 = float(m.qpos0[address])
    ball = m.jnt_type[j] == _BALL
    limited = bool(m.jnt_limited[j]) and not ball
    lower, upper = (float(m.jnt_range[j][0]) - qpos0, float(m.jnt_range[j][1]) - qpos0) if limited else (-np.inf, np.inf)
    effort = float(np.abs(m.jnt_actfrcrange[j]).max()) if m.jnt_actfrclimited[j] else np.inf
    axis = np.asarray(m.jnt_axis[j], dtype=float)
    return JointDescription(
        name=name,
        type={_HINGE: "revolute", _SLIDE: "prismatic", _BALL: "ball"}[int(m.jnt_type[j])],
        parent=parent,
        child=child,
        P_H_C=P_H_C,
        axis=axis / np.linalg.norm(axis),
        axis_point=np.asarray(m.jnt_pos[j], dtype=float) if m.jnt_type[j] in (_HINGE, _BALL) else np.zeros(3),
        limits=JointLimits(lower=lower, upper=upper, effort=effort),
        damping=float(m.dof_damping[dof]),
        friction=float(m.dof_frictionloss[dof]),
        armature=float(m.dof_armature[dof]),
        stiffness=float(m.jnt_stiffness[j]),
        spring_reference=float(m.qpos_spring[address]) - qpos0,
        mimic=reader.mimics.get(name),
        location=reader.where("joint", name),
        cone=_cone(m, j) if ball and m.jnt_limited[j] else None,
        soft_limit=_soft_limit(reader, j) if limited else None,
    )


def _softness(m, j: int) -> tuple[float, float, float, tuple[float, ...], float]:
    """Joint ``j``'s limit ``margin``, ``solreflimit`` (time constant, damping ratio, see
    :func:`_reference`), ``solimplimit`` and its first degree of freedom's ``dof_invweight0``."""
    time_constant, damping_ratio = _reference(m.jnt_solref[j])
    solimp = tuple(float(value) for value in m.jnt_solimp[j])
    return float(m.jnt_margin[j]), time_constant, damping_ratio, solimp, float(m.dof_invweight0[m.jnt_dofadr[j]])


def _cone(m, j: int) -> BallCone:
    """The cone limit of limited ball joint ``j``: MuJoCo uses the larger end of its range (the
    compiler requires the smaller to be 0)."""
    return BallCone(float(np.max(m.jnt_range[j])), *_softness(m, j))


def _soft_limit(reader: _Reader, j: int) -> SoftLimit:
    """The soft limit of limited hinge or slide joint ``j``; a located warning when its range is
    narrower than twice its margin (MuJoCo then engages both sides, the step only the nearer)."""
    m = reader.m
    limit = SoftLimit(*_softness(m, j))
    if m.jnt_range[j][1] - m.jnt_range[j][0] < 2.0 * limit.margin:
        where = reader.where("joint", reader.joint(j))
        message = f"the range of joint '{reader.joint(j)}' is narrower than twice its margin: only the nearer limit is engaged"
        warn(message, file=where.file, line=where.line, element=where.element)
    return limit


def _lines(root) -> dict[tuple[str, str | None], int]:
    """The line of each element of the main file, by (tag, name); unnamed ones by (tag, None), the first."""
    lines: dict[tuple[str, str | None], int] = {(root.tag, None): root.sourceline}
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


def _is_free(m, b: int) -> bool:
    """Whether body ``b`` is a child of the world with a free joint."""
    return m.body_parentid[b] == 0 and bool(m.body_jntnum[b]) and m.jnt_type[m.body_jntadr[b]] == _FREE


def _trees(reader: _Reader) -> list[list[int]]:
    """The bodies of each tree, in MuJoCo's order: one tree per free body under the world (with its
    subtree), then one of every other body (those welded or jointed to the world), if any, then
    one per mocap body whose geoms collide: a model of one link fixed at the body's pose, which
    its state's base pose moves (a kinematic body; other mocap bodies are no tree's, see
    :func:`_mocap_bodies`)."""
    m = reader.m
    free = [b for b in range(1, m.nbody) if _is_free(m, b)]
    trees = [[b for b in range(1, m.nbody) if m.body_rootid[b] == root] for root in free]
    welded = [b for b in range(1, m.nbody) if m.body_rootid[b] not in free and not _is_mocap(m, b)]
    return trees + ([welded] if welded else []) + [[b] for b in range(1, m.nbody) if _colliding_mocap(reader, b)]


def _colliding_mocap(reader: _Reader, b: int) -> bool:
    """Whether body ``b`` is a mocap body with geoms that collide: a tree of its own, a model fixed
    at the body's pose (see :func:`_trees`)."""
    m = reader.m
    return _is_mocap(m, b) and any(g in reader.collisions for g in range(int(m.body_geomadr[b]), int(m.body_geomadr[b]) + int(m.body_geomnum[b])))


def _root(reader: _Reader, bodies: list[int]) -> tuple[int, np.ndarray, bool]:
    """The root body of a tree (0: the world), its pose in the model frame and whether it is free."""
    m = reader.m
    world_children = [b for b in bodies if m.body_parentid[b] == 0]
    if not world_children:
        return 0, np.eye(4), False
    free = _is_free(m, world_children[0])
    if free or (len(world_children) == 1 and not m.body_jntnum[world_children[0]]):
        root = world_children[0]
        return root, mujoco_pose(m.body_pos[root], m.body_quat[root]), bool(free)
    return 0, np.eye(4), False


def _body_joints(reader: _Reader, b: int) -> tuple[list[LinkDescription], list[JointDescription]]:
    """The joints from body ``b``'s parent to it, through one massless link per joint but the last."""
    m, name = reader.m, reader.body(b)
    parent, P_H_C = reader.body(m.body_parentid[b]), mujoco_pose(m.body_pos[b], m.body_quat[b])
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


def _frames(reader: _Reader, bodies: set[int], links: set[str]) -> dict[int, FrameDescription]:
    """The named sites of ``bodies`` as frames, by site id; a site named like a link is the frame
    ``name::site`` (MuJoCo keeps bodies and sites in separate namespaces)."""
    m, frames = reader.m, {}
    for s in range(m.nsite):
        name = reader.name("site", s)
        if name and int(m.site_bodyid[s]) in bodies:
            label = f"{name}::site" if name in links else name
            pose = mujoco_pose(m.site_pos[s], m.site_quat[s])
            frames[s] = FrameDescription(label, reader.body(m.site_bodyid[s]), pose, location=reader.where("site", name))
    return frames


def _mocap_bodies(reader: _Reader, bodies: set[int]) -> list[MocapBody]:
    """The mocap bodies among ``bodies``, in MuJoCo's order (``body_mocapid``), at their pose in
    the file. A mocap body is a frame of the world whose pose the step takes as an input
    (MuJoCo's ``mocap_pos`` and ``mocap_quat``): it belongs to no tree, and the loop closures
    that name it hold on it wherever it is put, with its velocity taken as zero, as MuJoCo does."""
    m = reader.m
    mocap = sorted((int(m.body_mocapid[b]), b) for b in bodies if b and _is_mocap(m, b))
    return [MocapBody(reader.body(b), mujoco_pose(m.body_pos[b], m.body_quat[b]), reader.where("body", reader.body(b))) for _, b in mocap]


def _describe(reader: _Reader, bodies: list[int], name: str) -> ModelDescription:
    """The validated description of one tree (its ``bodies``), named ``name``."""
    m = reader.m
    root, M_H_root, free = _root(reader, bodies)
    links = [LinkDescription(name=WORLD, location=reader.where("worldbody", WORLD))] if root == 0 else []
    joints: list[JointDescription] = []
    for b in bodies:
        links.append(_link(reader, b))
        if b != root:
            extra_links, body_joints = _body_joints(reader, b)
            links += extra_links
            joints += body_joints
    members = set(bodies) | ({0} if root == 0 else set())
    joint_names = {joint.name for joint in joints}
    frames = _frames(reader, members, {link.name for link in links})
    tendons = _tendons(reader, joint_names, members, {s: frame.name for s, frame in frames.items()})
    tendon_names = {tendon.name for tendon in tendons}
    loops = [(pair, closure) for pair, closure in reader.loops
             if any(b in bodies and not _is_mocap(m, b) for b in pair) and not _across(reader, pair)]
    description = ModelDescription(
        name=name,
        links=links,
        joints=joints,
        frames=list(frames.values()),
        root=reader.body(root),
        M_H_root=M_H_root,
        fixed_to_world=not free,
        source=reader.file,
        actuators=read_actuators(reader, joint_names, tendon_names),
        tendons=tendons,
        tendon_equalities=_tendon_equalities(reader, tendon_names),
        loops=[closure for pair, closure in loops],
        mocap_bodies=_mocap_bodies(reader, {b for pair, _ in loops for b in pair}),
        fluid=_fluid(reader, bodies),
        collision_rules=reader.rules,
    )
    validate_description(description)
    return description


def _across(reader: _Reader, pair: tuple[int, int]) -> bool:
    """Whether the bodies ``pair`` of a connect or weld are moving bodies of two trees."""
    m = reader.m
    return all(b and not _is_mocap(m, b) for b in pair) and _tree_key(m, pair[0]) != _tree_key(m, pair[1])


def _world_closures(reader: _Reader, trees: list[list[int]], name: str) -> list[WorldClosure]:
    """The connects and welds between bodies of two ``trees`` as :class:`WorldClosure`, each side
    on the model of its tree (named as :func:`parse_mjcf_world` names it)."""
    model = {b: _tree_name(reader, tree, name) for tree in trees for b in tree}
    closures = []
    for pair, closure in reader.loops:
        if _across(reader, pair):
            fields = {f: getattr(closure, f) for f in closure.__dataclass_fields__}
            closures.append(WorldClosure(**fields, model1=model[pair[0]], model2=model[pair[1]]))
    return closures


def _read(source: str | os.PathLike, world: bool) -> tuple[_Reader, str]:
    """The reader of the compiled model of ``source`` and the model's name, after checking that
    everything in it can be represented, read as a ``world`` (see :func:`parse_mjcf_world`) or as
    one model."""
    mujoco = _mujoco()
    document = load_xml(source)
    file = document.file
    m = _compile(mujoco, source)
    reader = _Reader(mujoco, m, file, document.root)
    _unsupported(reader)
    reader.mimics = _mimics(reader)
    reader.loops = _loops(reader)
    reader.collisions = _collisions(reader)
    reader.rules = None if _contacts_off(reader) else collision_rules(reader, sorted(reader.collisions))
    warn_left_out(reader, world)
    warn_unrepresented(reader)
    name = document.root.get("model") or (os.path.splitext(os.path.basename(file))[0] if file else "mjcf")
    return reader, name


def _tree_name(reader: _Reader, bodies: list[int], model: str) -> str:
    """A free tree (and a mocap body's) is named after its root body; the tree of the bodies under
    the world after the file."""
    return reader.body(bodies[0]) if _is_free(reader.m, bodies[0]) or _is_mocap(reader.m, bodies[0]) else model


def parse_mjcf(source: str | os.PathLike) -> ModelDescription:
    """A validated :class:`ModelDescription` of an MJCF path or XML string (see the module docstring).

    A file of several trees gives its largest (the first of those with most bodies) with a
    :class:`ModelLoadWarning` naming it; :func:`parse_mjcf_world` gives them all. Raises
    :class:`ModelLoadError` for what MuJoCo cannot compile and what the model cannot represent
    (all of it in one error), ImportError without the ``mujoco`` package.
    """
    reader, name = _read(source, world=False)
    trees = _trees(reader)
    for closure in _world_closures(reader, trees, name):
        where = closure.location
        warn(f"{closure.kind} equality '{closure.name}' joins two trees ('{closure.model1}', '{closure.model2}'): not in one "
             "model; load_world loads it between them", file=where.file, line=where.line, element=where.element)
    if len(trees) <= 1:
        return _describe(reader, trees[0] if trees else [], name)
    tree = max(trees, key=len)
    label = _tree_name(reader, tree, name)
    names = ", ".join(f"'{_tree_name(reader, other, name)}'" for other in trees)
    where = reader.where("body", reader.body(tree[0]))
    warn(
        f"the file has {len(trees)} trees ({names}): the model is tree '{label}', the largest; load_world loads every tree",
        file=where.file,
        line=where.line,
        element=where.element,
    )
    return _describe(reader, tree, label)


def _physics(reader: _Reader) -> PhysicsDescription:
    """``<option>``'s timestep and the nearest integrator, with a warning where it differs in kind:
    MuJoCo's implicit integrators, and its Euler, which takes joint damping implicitly."""
    option, m = reader.m.opt, reader.m
    integrator = _INTEGRATORS[int(option.integrator)]
    damped = bool(np.any(m.dof_damping > 0.0))
    inexact = option.integrator not in (_EULER, _RK4) or (option.integrator == _EULER and damped)
    if inexact:
        mujoco_name = reader.mujoco.mjtIntegrator(int(option.integrator)).name.removeprefix("mjINT_").lower()
        line = reader.lines.get(("option", None))
        warn(
            f"MuJoCo's integrator '{mujoco_name}' is read as the nearest here, '{integrator}' "
            "(which forces each takes implicitly differs)",
            file=reader.file,
            line=line if line is not None else reader.lines.get(("mujoco", None)),
            element="<option>" if line is not None else "<mujoco>",
        )
    return PhysicsDescription(step_size=float(option.timestep), type="mujoco", integrator=integrator)


def parse_mjcf_world(source: str | os.PathLike) -> WorldDescription:
    """An MJCF path or XML string as a world: one model per tree (see :func:`_trees`; a free tree is
    named after its root body), MuJoCo's gravity [m/s^2] (zero where ``<flag gravity="disable">``) and
    ``<option>`` timestep [s] and integrator
    (the nearest, see :class:`PhysicsDescription`), and the world body's floor, boxes and planes as
    its terrain (see :mod:`.mjcf_terrain`). Raises as :func:`parse_mjcf`."""
    reader, name = _read(source, world=True)
    trees = _trees(reader)
    models = [_describe(reader, tree, _tree_name(reader, tree, name)) for tree in trees]
    gravity_off = reader.m.opt.disableflags & int(reader.mujoco.mjtDisableBit.mjDSBL_GRAVITY)
    return WorldDescription(
        name=name,
        gravity=np.zeros(3) if gravity_off else np.array(reader.m.opt.gravity, dtype=float),
        physics=_physics(reader),
        models=models,
        source=reader.file,
        closures=_world_closures(reader, trees, name),
        terrain=None if reader.rules is None else world_terrain(reader),
    )
