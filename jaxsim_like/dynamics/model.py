"""The immutable model pytree: static topology plus traced (differentiable) parameters.

Links are numbered by depth, so level ``l`` of the tree is the slice ``levels[l]`` and
``parent[i] < i``. Link ``i > 0`` is moved by the joint that connects it to ``parent[i]``;
joints are serialised in ``joint_names`` order (the description's, or the user's after
:func:`reduce`), and ``joint_link[k]`` is the link moved by joint ``k``.

A screw joint turns its link about its axis by its position ``q`` [rad] and moves it ``pitch * q``
along it: one degree of freedom, whose motion subspace is ``[p x a + pitch a; a]`` (``[linear; angular]``)
in the link frame, Pinocchio's helical joint.

A ball joint ``b`` is three degrees of freedom ``b:x, b:y, b:z`` (rotations about the child
frame's axes, consecutive in the joint order; see :func:`.tree.expand_ball_joints`) whose
position is one quaternion: joint positions ``(nq,)`` hold it inline (wxyz, as MuJoCo), joint
velocities ``(n,)`` its angular velocity in the child frame (see :mod:`.configuration`).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.description import TERRAIN, LoopClosure, Mimic, MocapBody, ModelDescription
from ..parsers.errors import ModelLoadError
from ..parsers.shapes import RIM_COLUMNS, ellipsoid_pole, rim_frames
from ..pytree import pytree_dataclass
from . import configuration, consistency, spatial
from .ball_cones import BallCones, build_ball_cones
from . import tree as tree_module
from .couplings import NO_LEADER, NO_SOLIMP, JointCouplings
from .loops import KINDS, NO_MOCAP, WORLD, LoopClosures
from .fluid import FluidDrag, build_fluid
from .hulls import Hulls
from .soft_limits import SoftLimits, build_soft_limits
from .tendons import Tendons, build_tendons
from .tree import BALL, CYLINDER, PRISMATIC, REVOLUTE, SCREW, RigidTree



class JointKind(enum.IntEnum):
    """The kind of each link's joint, ``Model.joint_type`` (static): the root has none, a
    ball joint is three rotations (:func:`.tree.expand_ball_joints`) and a screw joint turns
    and slides along its axis by ``Model.joint_pitch``."""

    ROOT = 0
    REVOLUTE = 1
    PRISMATIC = 2
    BALL_ROTATION = 3
    SCREW = 4


JOINT_KINDS = {
    tree_module.ROOT: JointKind.ROOT,
    REVOLUTE: JointKind.REVOLUTE,
    PRISMATIC: JointKind.PRISMATIC,
    BALL: JointKind.BALL_ROTATION,
    SCREW: JointKind.SCREW,
}
"""The :class:`JointKind` of each kind of :class:`.tree.RigidTree` joint."""

_STATIC_FIELDS = (
    "name",
    "link_names",
    "joint_names",
    "frame_names",
    "parent",
    "joint_type",
    "joint_link",
    "continuous",
    "frame_link",
    "point_link",
    "point_source",
    "shape_link",
    "shape_kind",
    "shape_source",
    "floating_base",
    "semantics",
    "ball_dofs",
    "point_collision",
    "shape_collision",
    "collision_rules",
)


@dataclasses.dataclass(frozen=True)
class Semantics:
    """Holds non-numeric extras (the SRDF) in the static part; compared by their ``repr``."""

    value: Any = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semantics) and repr(self.value) == repr(other.value)

    def __hash__(self) -> int:
        return hash(repr(self.value))


@pytree_dataclass(static=_STATIC_FIELDS)
class Model:
    """A rigid multibody model. ``N`` links, ``n`` joints (DoFs), ``F`` frames, ``P`` contact points,
    ``S`` solid collision shapes (the spheres, boxes, capsules, cylinders, convex hulls and ellipsoids that collisions use).
    ``ball_dofs`` (static): the first degree of freedom (``b:x``) of each ball joint.

    Traced fields (SI units; per-link arrays in link order, per-joint ones in joint order):

    - ``link_mass (N,)``, ``link_com (N, 3)`` in the link frame, ``link_inertia (N, 3, 3)``
      about the COM in the link axes;
    - ``joint_transform (N, 4, 4)``: ``P_H_C`` of each link in its parent at zero position;
      ``joint_axis (N, 3)`` and ``joint_axis_point (N, 3)`` in the link frame;
      ``joint_pitch (N,)`` [m/rad]: a screw joint's advance along its axis per radian (0 for
      the other kinds);
    - ``position_limit_lower/upper``, ``effort_limit``, ``velocity_limit``, ``joint_damping``,
      ``joint_friction``: ``(n,)``;
    - ``joint_armature (n,)`` [kg m^2 or kg]: rotor inertias (MJCF ``armature``; zero from URDF and
      SDF), added to the joint diagonal of the mass matrix (``M = M_rigid + diag(0, armature)``),
      in every algorithm and the simulation step;
    - ``joint_stiffness (n,)`` [N m/rad or N/m] and ``joint_spring_reference (n,)`` [rad or m]:
      joint springs ``tau = -stiffness (q - spring_reference)`` (SDF ``spring_stiffness``, MJCF
      ``stiffness``; zero from URDF), which the simulation step applies;
    - ``frame_transform (F, 4, 4)``: ``L_H_F`` of each frame in its link ``frame_link``;
    - ``collidable_points (P, 3)`` in the frame of link ``point_link``: the centres of swept points
      of radii ``point_radius (P,)`` [m] (0 for a corner; see :mod:`jaxsim_like.parsers.shapes`),
      and ``point_terrain (P,)``: 1 where the point touches the terrain, 0 where it does not (by
      the file's collision rules, see :func:`terrain_points`); ``point_friction (P,)`` and
      ``point_margin (P,)`` [m]: the Coulomb friction of each point's contact with the terrain
      and the distance from it within which that contact pushes (its margin), as
      the file's collision rules give them (MJCF; SDF and URDF friction, see
      :mod:`jaxsim_like.parsers.surfaces`; :func:`terrain_surfaces`; None: the friction of the
      model's contact law, no margin; a negative friction: the law's, at that point);
      ``point_torsion (P,)`` and ``point_rolling (P,)`` [m]: the torsional and rolling friction
      of each point's contact with the terrain (MJCF ``condim`` 4 and 6; None: the law's, none
      by default; negative: the law's, at that point);
    - the rings of points on the rims of cylinders (None: no point is on a rim), which the step
      turns about their axes towards the surface they meet (:mod:`jaxsim_like.simulation.rims`):
      ``ring_rim (R, 9)``: of each ring, its cap's centre [m], its cylinder's axis and its phase-0
      direction in the frame of its link ``ring_link (R,)`` (int32; see
      :func:`~jaxsim_like.parsers.shapes.rim_frames`); ``point_ring (P,)`` (int32): each point's
      ring; ring 0 is no ring (zeros, link 0), that of the points on no rim;
    - ``point_ellipsoid (P, 12)`` (None: no point is an ellipsoid's): of each point that is an exact
      ellipsoid's (its -z pole, :func:`~jaxsim_like.parsers.shapes.ellipsoid_pole`), the
      ellipsoid's centre [m] and ``R diag(radii)`` (row-major, [m]) in its link frame, zeros for
      the other points; the step moves such a point to the ellipsoid's deepest point along the
      surface it meets (:mod:`jaxsim_like.simulation.ellipsoids`);
    - ``shape_transform (S, 4, 4)``: ``L_H_S`` of each shape in its link ``shape_link``;
      ``shape_size (S, 3)`` [m]: half extents of a box, ``(radius, 0, 0)`` of a sphere,
      ``(radius, half length along the shape's z, 0)`` of a capsule or a cylinder, ``(radius of
      the ball about its origin that holds it, 0, 0)`` of a hull;
      ``shape_hulls``: the hulls of the hull shapes (:class:`.hulls.Hulls`, a row per shape;
      every count 0 in a model without hulls);
    - ``base_transform (4, 4)``: the default ``W_H_B`` (the pose the file gives the root);
    - ``couplings``: the mimic joints, :class:`.couplings.JointCouplings` (traced multipliers
      and offsets, static joint indices), which the simulation step enforces;
    - ``tendons``: the fixed and spatial tendons and the equalities of fixed ones,
      :class:`.tendons.Tendons`, whose passive forces, limits and equalities the simulation
      step applies;
    - ``fluid``: the medium the links move in (MJCF density, viscosity, wind) and their inertia
      boxes, :class:`.fluid.FluidDrag`, whose forces the simulation step applies;
    - ``loops``: the loop closures (MJCF connect and weld), :class:`.loops.LoopClosures`
      (traced frames and poses of the mocap bodies they hold on, static links), which the
      simulation step enforces;
    - ``ball_cones``: the cone limits of ball joints, :class:`.ball_cones.BallCones`, which the
      simulation step holds;
    - ``soft_limits``: the revolute and prismatic joints whose position limits the simulation
      step holds as MuJoCo's soft limits (MJCF), :class:`.soft_limits.SoftLimits`; the other
      joints' limits are spring-dampers.

    Static: ``point_source (P,)`` and ``shape_source (S,)`` name the description link each point
    and shape came from (a link lumped into its parent keeps its own name there),
    ``point_collision (P,)`` and ``shape_collision (S,)`` their collision element (``""``: not
    known); ``shape_kind (S,)`` is ``"sphere"``, ``"box"``, ``"capsule"``, ``"cylinder"``, ``"hull"`` or ``"ellipsoid"``
    (``shape_size``: its radii);
    ``collision_rules``: which collisions touch, as the file says
    (:class:`~jaxsim_like.parsers.description.CollisionRules`, MJCF; None: every collision).
    """

    link_mass: jax.Array
    link_com: jax.Array
    link_inertia: jax.Array
    joint_transform: jax.Array
    joint_axis: jax.Array
    joint_axis_point: jax.Array
    joint_pitch: jax.Array
    position_limit_lower: jax.Array
    position_limit_upper: jax.Array
    effort_limit: jax.Array
    velocity_limit: jax.Array
    joint_damping: jax.Array
    joint_friction: jax.Array
    joint_armature: jax.Array
    joint_stiffness: jax.Array
    joint_spring_reference: jax.Array
    frame_transform: jax.Array
    collidable_points: jax.Array
    point_radius: jax.Array
    point_terrain: jax.Array
    shape_transform: jax.Array
    shape_size: jax.Array
    shape_hulls: Hulls
    base_transform: jax.Array
    couplings: JointCouplings
    loops: LoopClosures
    tendons: Tendons
    fluid: FluidDrag
    ball_cones: BallCones
    soft_limits: SoftLimits

    name: str
    link_names: tuple[str, ...]
    joint_names: tuple[str, ...]
    frame_names: tuple[str, ...]
    parent: tuple[int, ...]
    joint_type: tuple[JointKind, ...]
    joint_link: tuple[int, ...]
    continuous: tuple[bool, ...]
    frame_link: tuple[int, ...]
    point_link: tuple[int, ...]
    point_source: tuple[str, ...]
    shape_link: tuple[int, ...]
    shape_kind: tuple[str, ...]
    shape_source: tuple[str, ...]
    floating_base: bool
    semantics: Semantics = Semantics()
    ball_dofs: tuple[int, ...] = ()
    point_collision: tuple[str, ...] = ()
    shape_collision: tuple[str, ...] = ()
    collision_rules: Any = None
    point_friction: jax.Array | None = None
    point_margin: jax.Array | None = None
    point_torsion: jax.Array | None = None
    point_rolling: jax.Array | None = None
    ring_rim: jax.Array | None = None
    ring_link: jax.Array | None = None
    point_ring: jax.Array | None = None
    point_ellipsoid: jax.Array | None = None

    @property
    def dofs(self) -> int:
        """Number of joint coordinates ``n``."""
        return len(self.joint_names)

    @property
    def joint_position_size(self) -> int:
        """Number of joint positions ``nq``: ``n`` plus one per ball joint (its quaternion has 4)."""
        return self.dofs + len(self.ball_dofs)

    @property
    def ball_joint_names(self) -> tuple[str, ...]:
        """The names of the ball joints, in the joint order."""
        return tuple(self.joint_names[k][: -len(":x")] for k in self.ball_dofs)

    @property
    def number_of_links(self) -> int:
        return len(self.link_names)

    @property
    def generalized_velocity_size(self) -> int:
        """``6 + n`` with a floating base, else ``n``."""
        return self.dofs + (6 if self.floating_base else 0)

    @property
    def total_mass(self) -> jax.Array:
        """Total mass [kg]."""
        return jnp.sum(self.link_mass)

    @property
    def srdf(self) -> Any:
        """The SRDF loaded with the model, or None."""
        return self.semantics.value

    @property
    def levels(self) -> tuple[tuple[int, int], ...]:
        """``(start, stop)`` slices of links at depth 1, 2, ... (the root is depth 0)."""
        return topology(self.parent, self.joint_link).levels


    def link_index(self, name: str) -> int:
        """Index of link ``name``; ValueError listing the links otherwise."""
        return _index(self.link_names, name, "link")

    def joint_index(self, name: str) -> int:
        """Index of joint ``name`` in the joint serialisation; ValueError otherwise."""
        return _index(self.joint_names, name, "joint")

    def frame_index(self, name: str) -> int:
        """Index of frame ``name``; ValueError otherwise."""
        return _index(self.frame_names, name, "frame")

    def __repr__(self) -> str:
        base = "floating" if self.floating_base else "fixed"
        return (
            f"Model({self.name!r}, links={self.number_of_links}, dofs={self.dofs}, base={base}, "
            f"frames={len(self.frame_names)}, collidable_points={len(self.point_link)})"
        )


def _index(names: Sequence[str], name: str, kind: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise ValueError(f"no {kind} named {name!r}; the {kind}s are {list(names)}") from None


@dataclasses.dataclass(frozen=True)
class Topology:
    """Static numpy matrices derived from the parent array, shared by the algorithms.

    ``support (N, n)``: joint ``k`` moves link ``i``; ``subtree (N, N)``: link ``j`` is in the
    subtree of ``i`` (itself included); ``ancestor (n, n)``: joint ``j`` is ``k`` or above it.
    """

    levels: tuple[tuple[int, int], ...]
    support: np.ndarray
    subtree: np.ndarray
    ancestor: np.ndarray
    link_joint: np.ndarray


def topology(parent: tuple[int, ...], joint_link: tuple[int, ...]) -> Topology:
    """The :class:`Topology` of a tree given by its parent array and the link of each joint.

    Cached per JAX x64 mode: JAX reuses its first conversion of a numpy index array when it
    traces again, so arrays shared by float32 and float64 traces would carry the wrong integer type."""
    return _topology(parent, joint_link, bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=256)
def _topology(parent: tuple[int, ...], joint_link: tuple[int, ...], x64: bool) -> Topology:
    del x64
    size, dofs = len(parent), len(joint_link)
    depth = np.zeros(size, dtype=int)
    for i in range(1, size):
        depth[i] = depth[parent[i]] + 1
    levels = tuple(
        (int(np.argmax(depth == d)), int(size - np.argmax(depth[::-1] == d))) for d in range(1, int(depth.max(initial=0)) + 1)
    )
    subtree = np.eye(size, dtype=bool)
    for i in range(size - 1, 0, -1):
        subtree[parent[i]] |= subtree[i]
    link_joint = np.full(size, -1)
    link_joint[list(joint_link)] = np.arange(dofs)
    support = subtree[list(joint_link)].T.copy() if dofs else np.zeros((size, 0), dtype=bool)
    ancestor = subtree[np.ix_(list(joint_link), list(joint_link))] if dofs else np.zeros((0, 0), dtype=bool)
    return Topology(
        levels=levels,
        support=support,
        subtree=subtree,
        ancestor=ancestor,
        link_joint=link_joint,
    )


def model_from_tree(
    tree: RigidTree,
    *,
    name: str,
    floating_base: bool,
    base_transform: np.ndarray,
    joint_order: Sequence[str] | None = None,
    semantics: Any = None,
    tendons: Tendons | None = None,
    loops: Sequence[LoopClosure] = (),
    mocap_bodies: Sequence[MocapBody] = (),
) -> Model:
    """Build the :class:`Model` from a tree without fixed joints (see :mod:`.tree`), its
    ``tendons`` over the joints in the order ``joint_order`` (none by default) and its ``loops``
    (their frames on links or on frames of ``tree``: links lumped into their body; or on the
    ``mocap_bodies`` they name); no fluid."""
    tree = tree_module.sort_by_depth(tree)
    link_of_joint = {jn: i for i, jn in enumerate(tree.joint_names) if jn is not None}
    joint_names = list(joint_order) if joint_order is not None else [tree.joint_names[i] for i in range(1, tree.size)]
    joint_link = [link_of_joint[j] for j in joint_names]
    points = [(i, p) for i, block in enumerate(tree.points) for p in block]
    radii = np.concatenate([np.zeros(0)] + [np.asarray(r, dtype=float).reshape(-1) for r in tree.radii])
    shapes = [(i, shape) for i, block in enumerate(tree.shapes) for shape in block]
    dtype = jnp.result_type(float)
    ring_rim, ring_link, point_ring = _rings(_rims(tree), [i for i, _ in points])
    point_ellipsoid = _ellipsoid_points(tree)

    def per_joint(values: np.ndarray) -> jax.Array:
        return jnp.asarray(np.asarray(values)[joint_link], dtype=dtype)

    return Model(
        link_mass=jnp.asarray(tree.mass, dtype=dtype),
        link_com=jnp.asarray(tree.com, dtype=dtype),
        link_inertia=jnp.asarray(tree.inertia, dtype=dtype),
        joint_transform=jnp.asarray(tree.P_H_C, dtype=dtype),
        joint_axis=jnp.asarray(tree.axis, dtype=dtype),
        joint_axis_point=jnp.asarray(tree.axis_point, dtype=dtype),
        joint_pitch=jnp.asarray(tree.pitch, dtype=dtype),
        position_limit_lower=per_joint(tree.lower),
        position_limit_upper=per_joint(tree.upper),
        effort_limit=per_joint(tree.effort),
        velocity_limit=per_joint(tree.velocity),
        joint_damping=per_joint(tree.damping),
        joint_friction=per_joint(tree.friction),
        joint_armature=per_joint(tree.armature),
        joint_stiffness=per_joint(tree.stiffness),
        joint_spring_reference=per_joint(tree.spring_reference),
        frame_transform=jnp.asarray(
            np.stack([H for _, _, H in tree.frames]) if tree.frames else np.zeros((0, 4, 4)), dtype=dtype
        ),
        collidable_points=jnp.asarray(np.array([p for _, p in points]).reshape(-1, 3), dtype=dtype),
        point_radius=jnp.asarray(radii, dtype=dtype),
        point_terrain=jnp.asarray(np.ones(len(points)), dtype=dtype),
        shape_transform=jnp.asarray(np.array([s.L_H_S for _, s in shapes]).reshape(-1, 4, 4), dtype=dtype),
        shape_size=jnp.asarray(np.array([s.size for _, s in shapes]).reshape(-1, 3), dtype=dtype),
        shape_hulls=Hulls.of([s.hull for _, s in shapes], dtype),
        base_transform=jnp.asarray(base_transform, dtype=dtype),
        couplings=_couplings(tree, joint_names, dtype),
        loops=_loops(tree, loops, mocap_bodies, dtype),
        tendons=Tendons.none(len(joint_names), dtype) if tendons is None else tendons,
        fluid=FluidDrag.none(dtype),
        ball_cones=BallCones.none(dtype),
        soft_limits=SoftLimits.none(dtype),
        name=name,
        link_names=tuple(tree.link_names),
        joint_names=tuple(joint_names),
        frame_names=tuple(n for n, _, _ in tree.frames),
        parent=tuple(int(p) for p in tree.parent),
        joint_type=tuple(JOINT_KINDS[k] for k in tree.joint_kind),
        joint_link=tuple(joint_link),
        continuous=tuple(bool(tree.continuous[i]) for i in joint_link),
        frame_link=tuple(int(link) for _, link, _ in tree.frames),
        point_link=tuple(i for i, _ in points),
        point_source=tuple(name for block in tree.point_source for name in block),
        shape_link=tuple(i for i, _ in shapes),
        shape_kind=tuple(s.kind for _, s in shapes),
        shape_source=tuple(s.source for _, s in shapes),
        point_collision=_point_collisions(tree, len(points)),
        shape_collision=tuple(s.collision for _, s in shapes),
        floating_base=floating_base,
        semantics=Semantics(semantics),
        ball_dofs=_ball_dofs(tree, joint_names),
        **({} if ring_rim is None else dict(ring_rim=jnp.asarray(ring_rim, dtype=dtype), ring_link=jnp.asarray(ring_link, jnp.int32),
                                            point_ring=jnp.asarray(point_ring, jnp.int32))),
        **({} if point_ellipsoid is None else dict(point_ellipsoid=jnp.asarray(point_ellipsoid, dtype=dtype))),
    )


ELLIPSOID_COLUMNS = 12
"""The columns of :attr:`Model.point_ellipsoid`: an ellipsoid's centre and ``R diag(radii)``, row-major."""


def _ellipsoid_points(tree: RigidTree) -> np.ndarray | None:
    """``(P, 12)``: of the points of ``tree`` (link after link) that are the -z pole of an ellipsoid
    shape of their link (radius 0; the first such shape), its centre and ``R diag(radii)``
    (row-major) in the link frame; zeros for the others. None where no point is."""
    blocks = []
    for points, radii, shapes in zip(tree.points, tree.radii, tree.shapes):
        rows = np.zeros((len(points), ELLIPSOID_COLUMNS))
        for shape in shapes:
            if shape.kind != tree_module.ELLIPSOID:
                continue
            R, origin = shape.L_H_S[:3, :3], shape.L_H_S[:3, 3]
            pole = R @ ellipsoid_pole(shape.size) + origin
            tolerance = 1e-9 * (1.0 + float(np.max(shape.size)))
            on = (np.linalg.norm(np.asarray(points).reshape(-1, 3) - pole, axis=1) <= tolerance) & (np.asarray(radii) == 0)
            on &= ~np.any(rows != 0, axis=1)
            rows[on] = np.concatenate([origin, (R * shape.size[None, :]).reshape(-1)])
        blocks.append(rows)
    rows = np.concatenate([np.zeros((0, ELLIPSOID_COLUMNS))] + blocks)
    return rows if np.any(rows) else None


def _rims(tree: RigidTree) -> np.ndarray:
    """``(P, 9)``: the :func:`~jaxsim_like.parsers.shapes.rim_frames` of the points of ``tree``,
    link after link, on the rims of their own link's cylinders."""
    blocks = [rim_frames(points, radii, [(s.L_H_S, float(s.size[0]), float(s.size[1])) for s in shapes if s.kind == CYLINDER])
              for points, radii, shapes in zip(tree.points, tree.radii, tree.shapes)]
    return np.concatenate([np.zeros((0, RIM_COLUMNS))] + blocks)


def _rings(rims: np.ndarray, point_link: list[int]) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """The rings of the points of ``rims (P, 9)`` (:func:`_rims`) on links ``point_link (P,)``: their
    ``ring_rim (R, 9)``, ``ring_link (R,)`` and each point's ring ``(P,)``, ring 0 no ring (the
    points with the same row on one link form a ring, in order of their first point); Nones
    where no point is on a rim."""
    if not np.any(rims):
        return None, None, None
    rings: dict[tuple, int] = {(): 0}
    point_ring = np.array([0 if not np.any(row) else rings.setdefault((link, *row.tolist()), len(rings))
                           for row, link in zip(rims, point_link)], dtype=np.int32)
    keys = list(rings)[1:]
    ring_rim = np.concatenate([np.zeros((1, RIM_COLUMNS)), np.array([key[1:] for key in keys]).reshape(-1, RIM_COLUMNS)])
    return ring_rim, np.array([0] + [key[0] for key in keys], dtype=np.int32), point_ring


def _point_collisions(tree: RigidTree, count: int) -> tuple[str, ...]:
    """The collision element of each of the ``count`` points of ``tree`` (``""``: not known)."""
    names = tuple(name for block in tree.point_collision for name in block)
    return names if len(names) == count else ("",) * count


def _ball_dofs(tree: RigidTree, joint_names: Sequence[str]) -> tuple[int, ...]:
    """The index in ``joint_names`` of each ball joint's first degree of freedom; ValueError when
    its three are not consecutive there."""
    starts = []
    for i, kind in enumerate(tree.joint_kind):
        name = tree.joint_names[i]
        if kind != BALL or not name.endswith(":x"):
            continue
        names = list(tree_module.ball_dof_names(name[: -len(":x")]))
        start = joint_names.index(name)
        if list(joint_names[start : start + 3]) != names:
            raise ValueError(f"the degrees of freedom {names} of a ball joint must be consecutive in the joint order")
        starts.append(start)
    return tuple(sorted(starts))


def _couplings(tree: RigidTree, joint_names: Sequence[str], dtype: Any) -> JointCouplings:
    """The mimics of ``tree`` whose follower moves, in the joint order ``joint_names``; a leader
    that does not move (a fixed joint) stands at zero."""
    rows = [(tree.joint_names[i], m) for i, m in enumerate(tree.mimic) if m is not None and tree.joint_names[i] in joint_names]
    if not rows:
        return JointCouplings.none(dtype)
    return JointCouplings(
        multiplier=jnp.asarray([m.multiplier for _, m in rows], dtype=dtype),
        offset=jnp.asarray([m.offset for _, m in rows], dtype=dtype),
        time_constant=jnp.asarray([m.time_constant for _, m in rows], dtype=dtype),
        damping_ratio=jnp.asarray([m.damping_ratio for _, m in rows], dtype=dtype),
        solimp=jnp.asarray(np.array([m.solimp if m.solimp is not None else NO_SOLIMP for _, m in rows], dtype=float), dtype=dtype),
        inverse_weight=jnp.asarray([m.inverse_weight for _, m in rows], dtype=dtype),
        follower=tuple(joint_names.index(name) for name, _ in rows),
        leader=tuple(joint_names.index(m.joint) if m.joint in joint_names else NO_LEADER for _, m in rows),
        soft=tuple(m.solimp is not None for _, m in rows),
    )


def _loop_side(tree: RigidTree, closure: LoopClosure, link: str, L_H_F: np.ndarray, mocap: Sequence[str]) -> tuple[int, int, np.ndarray]:
    """A closure side's link index in ``tree`` (``WORLD`` for the world, an empty name, and for
    a mocap body), its index among the ``mocap`` bodies' names (``NO_MOCAP``: none) and its
    frame in that link or body: a link lumped into its body is one of the tree's frames."""
    if not link:
        return WORLD, NO_MOCAP, np.asarray(L_H_F, dtype=float)
    if link in mocap:
        return WORLD, list(mocap).index(link), np.asarray(L_H_F, dtype=float)
    if link in tree.link_names:
        return tree.link_names.index(link), NO_MOCAP, np.asarray(L_H_F, dtype=float)
    for name, body, B_H_L in tree.frames:
        if name == link:
            return int(body), NO_MOCAP, np.asarray(B_H_L, dtype=float) @ L_H_F
    where = closure.location
    raise ModelLoadError(f"loop closure {closure.name!r}: no link {link!r} in the model", file=where.file, line=where.line, element=where.element)


def _loops(tree: RigidTree, loops: Sequence[LoopClosure], mocap_bodies: Sequence[MocapBody], dtype: Any) -> LoopClosures:
    """The :class:`LoopClosures` of the closures ``loops`` on the links (or frames) of ``tree``
    and the ``mocap_bodies``."""
    if not loops:
        return LoopClosures.none(dtype)
    mocap = [body.name for body in mocap_bodies]
    sides = [(_loop_side(tree, c, c.link1, c.L1_H_F1, mocap), _loop_side(tree, c, c.link2, c.L2_H_F2, mocap)) for c in loops]
    for closure, ((link1, _, _), (link2, _, _)) in zip(loops, sides):
        if closure.kind not in KINDS:
            where = closure.location
            raise ModelLoadError(f"loop closure {closure.name!r}: kind {closure.kind!r} is not one of {list(KINDS)}", file=where.file, line=where.line, element=where.element)
        if link1 == link2:
            where = closure.location
            joined = "a frame of the world to another" if link1 == WORLD else f"link {closure.link1!r} to itself"
            raise ModelLoadError(f"loop closure {closure.name!r} joins {joined}", file=where.file, line=where.line, element=where.element)
    poses = np.stack([np.asarray(body.W_H_B, dtype=float) for body in mocap_bodies]) if mocap_bodies else np.zeros((0, 4, 4))
    return LoopClosures(
        frame1=jnp.asarray(np.stack([one[2] for one, _ in sides]), dtype=dtype),
        frame2=jnp.asarray(np.stack([two[2] for _, two in sides]), dtype=dtype),
        torque_scale=jnp.asarray([c.torque_scale for c in loops], dtype=dtype),
        time_constant=jnp.asarray([c.time_constant for c in loops], dtype=dtype),
        damping_ratio=jnp.asarray([c.damping_ratio for c in loops], dtype=dtype),
        mocap_position=jnp.asarray(poses[:, :3, 3], dtype=dtype),
        mocap_quaternion=spatial.rotation_to_quaternion(jnp.asarray(poses[:, :3, :3], dtype=dtype)) if mocap else jnp.asarray(np.zeros((0, 4)), dtype=dtype),
        solimp=jnp.asarray(np.array([c.solimp for c in loops], dtype=float), dtype=dtype),
        inverse_weight=jnp.asarray(np.array([c.inverse_weight for c in loops], dtype=float), dtype=dtype),
        pitch=jnp.asarray([c.pitch for c in loops], dtype=dtype),
        link1=tuple(one[0] for one, _ in sides),
        link2=tuple(two[0] for _, two in sides),
        kind=tuple(c.kind for c in loops),
        names=tuple(c.name for c in loops),
        mocap1=tuple(one[1] for one, _ in sides),
        mocap2=tuple(two[1] for _, two in sides),
        mocap_names=tuple(mocap),
    )


def model_mocap_bodies(model: Model) -> list[MocapBody]:
    """The mocap bodies of ``model``'s closures as descriptions, at their current poses (concrete values)."""
    loops = model.loops
    poses = np.asarray(spatial.pose_to_transform(loops.mocap_position, loops.mocap_quaternion)).reshape(-1, 4, 4)
    return [MocapBody(name, poses[k]) for k, name in enumerate(loops.mocap_names)]


def model_loops(model: Model) -> list[LoopClosure]:
    """The closures of ``model`` as descriptions on its link names (concrete values)."""
    loops = model.loops

    def names(link: int, mocap: int) -> str:
        if link == WORLD:
            return loops.mocap_names[mocap] if mocap != NO_MOCAP else ""
        return model.link_names[link]

    return [
        LoopClosure(
            name,
            kind,
            names(link1, mocap1),
            names(link2, mocap2),
            np.asarray(loops.frame1[k]),
            np.asarray(loops.frame2[k]),
            float(loops.torque_scale[k]),
            float(loops.time_constant[k]),
            float(loops.damping_ratio[k]),
            solimp=tuple(float(value) for value in loops.solimp[k]),
            inverse_weight=tuple(float(value) for value in loops.inverse_weight[k]),
            pitch=float(loops.pitch[k]),
        )
        for k, (name, kind, link1, link2, mocap1, mocap2) in enumerate(
            zip(loops.names, loops.kind, loops.link1, loops.link2, loops.mocap1, loops.mocap2)
        )
    ]


def build_model(
    description: ModelDescription,
    *,
    floating_base: bool | None = None,
    collidable_points: Callable[[Any], np.ndarray] | None = None,
    semantics: Any = None,
    mesh_hulls: int | None = None,
    ellipsoids: bool = True,
) -> Model:
    """The :class:`Model` of a description: fixed joints lumped, links ordered by depth.

    The bodies left after lumping are made physically consistent by the documented rules of
    :mod:`.consistency`, each change with a :class:`~jaxsim_like.parsers.errors.ModelLoadWarning`;
    mimic joints become the model's :attr:`Model.couplings`, the ball joints' cone limits its
    :attr:`Model.ball_cones` and the joints' soft limits its :attr:`Model.soft_limits`. ``floating_base`` defaults to the file's choice (floating unless welded to the world).
    ``collidable_points(link)`` gives each link's contact points (none by default): swept points
    (:class:`~jaxsim_like.parsers.shapes.SweptPoints`) or centres ``(P, 3)`` of radius 0;
    ``mesh_hulls``: meshes become hull shapes of at most that many vertices (:func:`.tree.link_shapes`;
    the points should then be those of :class:`~jaxsim_like.ContactSampling` of the same ``mesh_hulls``);
    ``ellipsoids``: ellipsoids become ellipsoid shapes (default; the points should then give each
    its pole, which the step moves to its deepest point: those of :class:`~jaxsim_like.ContactSampling`
    by default, ``sphere_samples = None``, :mod:`~jaxsim_like.parsers.shapes`).
    """
    points = collidable_points or (lambda link: np.zeros((0, 3)))
    full = tree_module.tree_from_description(description, points, mesh_hulls, ellipsoids)
    lumped = tree_module.lump_fixed_joints(full)
    floating = not description.fixed_to_world if floating_base is None else bool(floating_base)
    if floating and lumped.mass.sum() <= 0:
        raise ModelLoadError(
            "a floating-base model needs a positive total mass", file=description.source, element=f"<model name={description.name!r}>"
        )
    lumped = consistency.make_consistent(tree_module.expand_ball_joints(lumped), description, floating=floating)
    joint_order = [
        name for j in description.joints if j.type != "fixed" for name in (tree_module.ball_dof_names(j.name) if j.type == BALL else (j.name,))
    ]
    model = model_from_tree(
        lumped,
        name=description.name,
        floating_base=floating,
        base_transform=description.W_H_M @ description.M_H_root,
        joint_order=joint_order,
        semantics=semantics,
        loops=description.loops,
        mocap_bodies=description.mocap_bodies,
        tendons=build_tendons(
            description.tendons, description.tendon_equalities, joint_order, jnp.result_type(float),
            [name for name, _, _ in lumped.frames], lumped.link_names,
        ),
    )
    dtype = jnp.result_type(float)
    return model.replace(
        fluid=build_fluid(description, model.link_names, _frames(model), dtype),
        ball_cones=build_ball_cones(description.joints, model.ball_joint_names, dtype),
        soft_limits=build_soft_limits(description.joints, model.joint_names, dtype),
        collision_rules=description.collision_rules,
        point_terrain=terrain_points(description.collision_rules, model.point_collision, dtype),
        **terrain_surfaces(description.collision_rules, model.point_collision, dtype),
    )


def terrain_points(rules: Any, point_collision: Sequence[str], dtype: Any) -> jax.Array:
    """``(P,)``: 1 for each point whose collision touches the terrain by the collision ``rules``
    (every point without rules, and a point of an unknown collision ``""``), else 0."""
    touching = [rules is None or name == "" or rules.touches_terrain(name) for name in point_collision]
    return jnp.asarray(np.asarray(touching, dtype=float), dtype=dtype)


def terrain_surfaces(rules: Any, point_collision: Sequence[str], dtype: Any) -> dict[str, jax.Array | None]:
    """``point_friction`` and ``point_margin`` ``(P,)`` of the points of collisions ``point_collision``
    with the terrain, by the collision ``rules`` (:meth:`~jaxsim_like.parsers.description.CollisionRules.surface`:
    a pair with the floor, else the larger of the collision's and the floor's); a point the rules
    give none (a collision without a surface, or not known) has friction -1 (the contact law's)
    and margin 0; both None when the rules give no point's. ``point_torsion`` and ``point_rolling``
    likewise (-1: the law's), None unless a point's contact has torsional or rolling friction."""
    surfaces = [None if rules is None or name == "" else rules.surface(name, TERRAIN) for name in point_collision]
    if all(surface is None for surface in surfaces):
        return {"point_friction": None, "point_margin": None, "point_torsion": None, "point_rolling": None}

    def column(value, missing: float) -> jax.Array:
        return jnp.asarray(np.asarray([missing if s is None else value(s) for s in surfaces], dtype=float), dtype=dtype)

    spins = any(s is not None and (s.torsion or s.rolling) for s in surfaces)
    return {
        "point_friction": column(lambda s: s.friction, -1.0),
        "point_margin": column(lambda s: s.margin, 0.0),
        "point_torsion": column(lambda s: s.torsion, -1.0) if spins else None,
        "point_rolling": column(lambda s: s.rolling, -1.0) if spins else None,
    }


def _frames(model: Model) -> list[tuple[str, int, np.ndarray]]:
    """The frames of ``model`` as ``(name, link, L_H_F)`` (concrete values)."""
    transforms = np.asarray(model.frame_transform)
    return [(name, link, transforms[f]) for f, (name, link) in enumerate(zip(model.frame_names, model.frame_link))]


def _tree_of_model(model: Model, locked: dict[str, float]) -> RigidTree:
    """The model's tree (moving links only) as numpy arrays, its mimics with the ``locked``
    leaders folded in (see :func:`_mimics`): needs concrete (not traced) values."""
    try:
        values = {f: np.asarray(getattr(model, f)) for f in ("link_mass", "link_com", "link_inertia", "joint_transform",
                                                            "joint_axis", "joint_axis_point", "joint_pitch", "frame_transform",
                                                            "collidable_points", "point_radius", "shape_transform", "shape_size")}
    except jax.errors.TracerArrayConversionError:
        raise ValueError("reduce() needs a concrete model, not one traced inside jit/vmap/grad") from None
    topo = topology(model.parent, model.joint_link)
    size = model.number_of_links

    def per_link(values_of_joints: jax.Array, fill: float) -> np.ndarray:
        out = np.full(size, fill)
        out[list(model.joint_link)] = np.asarray(values_of_joints)
        return out

    tree_kinds = {kind: name for name, kind in JOINT_KINDS.items()}
    kinds = [tree_kinds[model.joint_type[i]] for i in range(size)]
    names: list[str | None] = [None] + [model.joint_names[topo.link_joint[i]] for i in range(1, size)]
    continuous = [False] * size
    for k, link in enumerate(model.joint_link):
        continuous[link] = model.continuous[k]
    mimic = _mimics(model, locked)
    point_link = np.asarray(model.point_link, dtype=int)
    shapes: list[list[tree_module.Shape]] = [[] for _ in range(size)]
    for s, link in enumerate(model.shape_link):
        shapes[link].append(
            tree_module.Shape(model.shape_kind[s], values["shape_transform"][s], values["shape_size"][s], model.shape_source[s],
                              model.shape_collision[s] if model.shape_collision else "",
                              model.shape_hulls.hull(s) if model.shape_kind[s] == tree_module.HULL else None)
        )
    return RigidTree(
        link_names=list(model.link_names),
        parent=list(model.parent),
        joint_names=names,
        joint_kind=kinds,
        continuous=continuous,
        P_H_C=values["joint_transform"],
        axis=values["joint_axis"],
        axis_point=values["joint_axis_point"],
        pitch=values["joint_pitch"],
        mass=values["link_mass"],
        com=values["link_com"],
        inertia=values["link_inertia"],
        lower=per_link(model.position_limit_lower, -np.inf),
        upper=per_link(model.position_limit_upper, np.inf),
        effort=per_link(model.effort_limit, np.inf),
        velocity=per_link(model.velocity_limit, np.inf),
        damping=per_link(model.joint_damping, 0.0),
        friction=per_link(model.joint_friction, 0.0),
        armature=per_link(model.joint_armature, 0.0),
        stiffness=per_link(model.joint_stiffness, 0.0),
        spring_reference=per_link(model.joint_spring_reference, 0.0),
        mimic=[mimic.get(n) for n in names],
        points=[values["collidable_points"][point_link == i] for i in range(size)],
        radii=[values["point_radius"][point_link == i] for i in range(size)],
        point_source=[tuple(model.point_source[k] for k in np.flatnonzero(point_link == i)) for i in range(size)],
        point_collision=[tuple(model.point_collision[k] for k in np.flatnonzero(point_link == i)) if model.point_collision else ()
                         for i in range(size)],
        shapes=shapes,
        frames=[(n, model.frame_link[f], values["frame_transform"][f]) for f, n in enumerate(model.frame_names)],
    )


def _mimics(model: Model, locked: dict[str, float] | None = None) -> dict[str, Mimic]:
    """The couplings of ``model`` as mimics by follower name (concrete values); a leader among
    the ``locked`` joints [rad or m] is folded into the offset (its mimic names no joint)."""
    locked = {} if locked is None else locked
    mimics = {}
    for r, (follower, leader) in enumerate(zip(model.couplings.follower, model.couplings.leader)):
        multiplier, offset = float(model.couplings.multiplier[r]), float(model.couplings.offset[r])
        name = model.joint_names[leader] if leader != NO_LEADER else ""
        if name in locked:
            name, offset = "", offset + multiplier * locked[name]
        reference = float(model.couplings.time_constant[r]), float(model.couplings.damping_ratio[r])
        solimp = tuple(float(value) for value in model.couplings.solimp[r]) if model.couplings.soft[r] else None
        mimics[model.joint_names[follower]] = Mimic(name, multiplier, offset, *reference, solimp, float(model.couplings.inverse_weight[r]))
    return mimics


def _kept_names(model: Model, joint_names: Sequence[str]) -> list[str]:
    """``joint_names`` with each ball joint's name as its three degrees of freedom; ValueError for
    unknown names, duplicates and a ball joint kept in part."""
    balls = dict(zip(model.ball_joint_names, (tree_module.ball_dof_names(b) for b in model.ball_joint_names)))
    names = [dof for name in joint_names for dof in (balls[name] if name in balls else (name,))]
    for name in names:
        model.joint_index(name)
    if len(set(names)) != len(names):
        raise ValueError(f"joint_names has duplicates: {list(joint_names)}")
    for ball, dofs in balls.items():
        if 0 < len(set(dofs) & set(names)) < 3:
            raise ValueError(f"ball joint {ball!r}: keep its three degrees of freedom {list(dofs)} or none (its name keeps them)")
    return names


def _locked_values(model: Model, locked_positions: dict[str, Any] | Sequence[float] | None) -> dict[str, Any]:
    """The given positions by joint name: a float per scalar joint, a unit quaternion ``(4,)`` per
    ball joint (by the ball's name); ValueError for unknown names and malformed values."""
    if locked_positions is None:
        return {}
    if not isinstance(locked_positions, dict):
        values = np.asarray(locked_positions, dtype=float).reshape(-1)
        if values.size != model.joint_position_size:
            raise ValueError(f"locked_positions has {values.size} values, the model has {model.joint_position_size} joint positions")
        layout = configuration.position_layout(model)
        scalars = {model.joint_names[k]: float(values[entry]) for k, entry in zip(layout.scalar_dofs, layout.scalar_positions)}
        balls = {b: values[entry : entry + 4] for b, entry in zip(model.ball_joint_names, layout.ball_positions)}
        return _locked_values(model, scalars | balls)
    positions: dict[str, Any] = {}
    for name, value in locked_positions.items():
        if name in model.ball_joint_names:
            quaternion = np.asarray(value, dtype=float)
            if quaternion.shape != (4,) or not np.linalg.norm(quaternion) > 0:
                raise ValueError(f"ball joint {name!r} is locked at a quaternion (4,) (wxyz, nonzero), got {value!r}")
            positions[name] = quaternion / np.linalg.norm(quaternion)
        elif model.joint_index(name) in {start + axis for start in model.ball_dofs for axis in range(3)}:
            raise ValueError(f"{name!r} is a degree of freedom of a ball joint: lock the ball by its name at a quaternion")
        else:
            positions[name] = float(value)
    return positions


def reduce(model: Model, joint_names: Sequence[str], locked_positions: dict[str, Any] | Sequence[float] | None = None) -> Model:
    """A model with only ``joint_names`` (in that order); every other joint is locked and lumped.

    A ball joint is kept by its name (its three degrees of freedom, ``b:x, b:y, b:z``) or by
    those three consecutive. ``locked_positions`` gives the positions of locked joints, as a
    mapping by name (a scalar joint's [rad or m], a ball joint's quaternion ``(4,)`` (wxyz) by
    the ball's name) or as the model's joint positions ``(nq,)`` (the layout of
    ``State.joint_positions``); missing ones are locked at zero, missing balls at the identity.
    A locked ball's pose is folded into the fixed transform to its child, and its cone limit
    dropped. A mimic joint whose leader is locked keeps its rule with the leader at its locked
    position; locking a mimic joint but not its leader is a ValueError.
    """
    joint_names = _kept_names(model, joint_names)
    positions = _locked_values(model, locked_positions)
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    locked_balls = {b: positions.get(b, identity) for b in model.ball_joint_names if tree_module.ball_dof_names(b)[0] not in joint_names}
    of_balls = {dof for b in model.ball_joint_names for dof in tree_module.ball_dof_names(b)}
    locked = {name: positions.get(name, 0.0) for name in model.joint_names if name not in joint_names and name not in of_balls}
    for follower, leader in zip(model.couplings.follower, model.couplings.leader):
        if model.joint_names[follower] in locked and leader != NO_LEADER and model.joint_names[leader] not in locked:
            raise ValueError(
                f"joint {model.joint_names[leader]!r} leads the locked mimic joint {model.joint_names[follower]!r}: "
                "lock both or keep both"
            )
    # A locked ball turns its first degree of freedom's link by its quaternion, the other two by none.
    turns = {dof: q if axis == 0 else identity for b, q in locked_balls.items() for axis, dof in enumerate(tree_module.ball_dof_names(b))}
    # What tendons read of a locked ball: its rotation vector.
    rotation_vectors = {
        dof: float(value)
        for b, q in locked_balls.items()
        for dof, value in zip(tree_module.ball_dof_names(b), np.asarray(spatial.quaternion_log(jnp.asarray(q))))
    }
    tree = tree_module.lock_joints(_tree_of_model(model, locked), locked | turns)
    tendons = model.tendons.reduce(
        [model.joint_index(name) for name in joint_names],
        {model.joint_index(name): value for name, value in (locked | rotation_vectors).items()},
    )
    reduced = model_from_tree(
        tree_module.lump_fixed_joints(tree),
        name=model.name,
        floating_base=model.floating_base,
        base_transform=np.asarray(model.base_transform),
        joint_order=joint_names,
        semantics=model.semantics.value,
        loops=model_loops(model),
        mocap_bodies=model_mocap_bodies(model),
        tendons=tendons,
    )
    # The bodies in the fluid, by the names of their links here, on the reduced model's links.
    fluid = model.fluid.renamed(model.link_names)
    soft_limits = model.soft_limits.reduce([model.joint_index(name) for name in joint_names])
    ball_cones = model.ball_cones.reduce(model.ball_joint_names, reduced.ball_joint_names)
    return reduced.replace(fluid=fluid.placed(reduced.link_names, _frames(reduced)), soft_limits=soft_limits, ball_cones=ball_cones,
                           collision_rules=model.collision_rules,
                           point_terrain=terrain_points(model.collision_rules, reduced.point_collision, reduced.point_radius.dtype),
                           **terrain_surfaces(model.collision_rules, reduced.point_collision, reduced.point_radius.dtype))
