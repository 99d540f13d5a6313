"""Plain descriptions of models and worlds, as the parsers produce them (no JAX here).

Conventions used by every field below:

- Poses are homogeneous transforms ``A_H_B: (4, 4)`` (pose of frame B in frame A), metres.
- Every link has its own frame; a joint connects a parent link to a child link and
  ``P_H_C`` is the pose of the child link frame in the parent link frame at zero joint
  position. The joint moves the child about (revolute) or along (prismatic) ``axis``, a
  unit vector expressed in the child link frame, through ``axis_point`` (a point of the
  axis in the child link frame; zero for URDF, where the joint frame is the child frame).
  A screw joint turns the child about ``axis`` by its position ``q`` [rad] and moves it
  ``pitch * q`` along it.
- Inertias are rotational inertias about the centre of mass, expressed in the inertial
  frame ``L_H_I`` (pose of the inertial frame in the link frame), kg m^2.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SourceLocation:
    """Where an element comes from: file (None for a string), line and a short element tag."""

    file: str | None = None
    line: int | None = None
    element: str | None = None

    def within(self, source: str | None) -> "SourceLocation":
        """This location, in ``source`` (a description's file) when it names no file itself."""
        return self if self.file is not None else SourceLocation(source, self.line, self.element)

    def __str__(self) -> str:
        where = self.file if self.file is not None else "<string>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.element}" if self.element else where


@dataclass
class Inertial:
    """Mass [kg], inertial frame pose ``L_H_I: (4, 4)`` and inertia about the COM in that frame ``(3, 3)``."""

    mass: float
    L_H_I: np.ndarray = field(default_factory=lambda: np.eye(4))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


@dataclass
class Geometry:
    """A collision or visual shape in its own frame.

    ``type`` is one of ``box`` (``size``: x, y, z), ``sphere`` (``radius``), ``cylinder``
    and ``capsule`` (``radius``, ``length`` along z), ``ellipsoid`` (``size``: radii a, b, c),
    ``plane`` (``normal``, ``size``: x, y) or ``mesh`` (``uri`` as written, ``path`` resolved
    or None when not found, ``scale``; or ``vertices (V, 3)`` in the shape frame, scaled, when the
    source gives them, as MuJoCo's compiler does for MJCF).
    """

    type: str
    size: tuple[float, ...] = ()
    radius: float = 0.0
    length: float = 0.0
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    uri: str | None = None
    path: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    vertices: np.ndarray | None = None


@dataclass
class Collision:
    """A collision element: name, shape pose in the link frame ``L_H_G: (4, 4)``, its geometry,
    the Coulomb ``friction`` its file gives its surface (SDF ``<surface><friction><ode><mu>``,
    URDF ``<gazebo reference><mu1>``; None: not given; MJCF's are in :class:`CollisionRules`) and
    its ``bitmasks``, ``(category, collide)`` (SDF ``<surface><contact><category_bitmask>`` and
    ``<collide_bitmask>``; None: not given)."""

    name: str
    L_H_G: np.ndarray
    geometry: Geometry
    location: SourceLocation = field(default_factory=SourceLocation)
    friction: float | None = None
    bitmasks: tuple[int, int] | None = None


@dataclass(frozen=True)
class ContactPair:
    """An explicit contact pair (MJCF ``<contact><pair>``) between the collisions ``collision_a``
    and ``collision_b`` (names; :data:`TERRAIN` for the terrain): its Coulomb ``friction`` (the
    first tangential coefficient), ``margin`` [m] (the surfaces touch ``margin`` apart),
    ``gap`` [m] (beyond the margin, contacts that MuJoCo, since 3.9, reports without force: none
    here) and the ``torsion`` and ``rolling`` friction coefficients [m] (MuJoCo's condim 4 and 6;
    0: none)."""

    collision_a: str
    collision_b: str
    friction: float
    margin: float = 0.0
    gap: float = 0.0
    torsion: float = 0.0
    rolling: float = 0.0
    location: SourceLocation = field(default_factory=SourceLocation, compare=False)


TERRAIN = ""
"""The name :class:`CollisionRules` and :class:`ContactPair` give the terrain."""


FRICTION_RULES = ("larger", "smaller", "product")
"""How two surfaces' frictions combine: MuJoCo's (MJCF), Gazebo's (SDF, URDF ``<gazebo>``) and
Bullet's (URDF ``<contact><lateral_friction>``, PyBullet's)."""


def combined(collision_a: str, a: tuple | None, collision_b: str, b: tuple | None, rule: str = "larger") -> ContactPair | None:
    """The contact of two collisions' surfaces ``a`` and ``b`` (:meth:`CollisionRules.own`), as
    MuJoCo combines two geoms: the larger margin and gap, the friction (its three coefficients)
    and contact dimension of the one of higher priority, or the larger of each at equal
    priorities, no friction at dimension 1, torsional friction from dimension 4, rolling at 6;
    by the ``rule`` ``"smaller"`` or ``"product"`` (:data:`FRICTION_RULES`), the friction is the
    smaller of the two, as Gazebo combines surfaces, or their product, as Bullet does; None when
    either has no surface."""
    if a is None or b is None:
        return None
    friction, margin, gap, condim, _, torsion, rolling = (max(x, y) for x, y in zip(_full(a), _full(b)))
    if rule == "smaller":
        friction = min(a[0], b[0])
    elif rule == "product":
        friction = a[0] * b[0]
    elif a[4] != b[4]:
        friction, _, _, condim, _, torsion, rolling = _full(max(a, b, key=lambda surface: surface[4]))
    first, second = sorted((collision_a, collision_b))
    return ContactPair(first, second, friction if condim > 1 else 0.0, margin, gap, torsion if condim >= 4 else 0.0,
                       rolling if condim >= 6 else 0.0)


def _full(surface: tuple) -> tuple:
    """``(friction, margin, gap, condim, priority, torsion, rolling)`` of a surface (without its
    last two: no torsional nor rolling friction)."""
    return tuple(surface) + (0.0, 0.0)[: 7 - len(surface)]


@dataclass(frozen=True)
class CollisionRules:
    """Which collisions of a file may touch, as MuJoCo decides (MJCF), shared by the models of one
    file (the trees of an MJCF file). Collisions and links are named as in the file (unique in it).

    - ``filters``: ``(collision, contype, conaffinity)``: two collisions touch when
      ``contype_a & conaffinity_b`` or ``contype_b & conaffinity_a`` is non-zero (collisions not
      listed: ``1, 1``);
    - ``welds``: ``(link, weld, weld_parent)`` per description link (MuJoCo's body): links of
      one weld never touch, nor those whose welds are parent and child (the world, weld 0,
      excepted; ``weld_parent`` -1: MuJoCo's ``filterparent`` is off);
    - ``excludes``: pairs of links whose collisions never touch by these rules (MJCF ``<exclude>``;
      :data:`TERRAIN` stands for the world body and its floor);
    - ``terrain``: the collisions that touch the terrain (the file's floor), None when the file
      has no floor (then every collision does);
    - ``pairs``: the :class:`ContactPair` that touch whatever the rules above say;
    - ``surfaces``: ``(collision, friction, margin, gap, condim, priority[, torsion, rolling])``:
      the Coulomb friction, margin [m], gap [m], contact dimension, priority and torsional and
      rolling friction [m] (none when left out) that a collision
      (:data:`TERRAIN`: the floor) brings to its contacts (MJCF geoms' ``friction``, its three
      coefficients, ``margin``, ``gap``, ``condim`` and ``priority``); see :meth:`surface`;
    - ``friction_rule``: how two collisions' frictions combine (:data:`FRICTION_RULES`):
      ``"larger"``, MuJoCo's (MJCF); ``"smaller"``, Gazebo's (SDF, URDF ``<gazebo>``);
      ``"product"``, Bullet's (URDF ``<contact><lateral_friction>``).
    """

    filters: tuple[tuple[str, int, int], ...] = ()
    welds: tuple[tuple[str, int, int], ...] = ()
    excludes: tuple[tuple[str, str], ...] = ()
    terrain: frozenset[str] | None = None
    pairs: tuple[ContactPair, ...] = ()
    surfaces: tuple[tuple, ...] = ()
    friction_rule: str = "larger"

    def __post_init__(self) -> None:
        object.__setattr__(self, "_filter", {name: (contype, conaffinity) for name, contype, conaffinity in self.filters})
        object.__setattr__(self, "_weld", {name: (weld, parent) for name, weld, parent in self.welds})
        object.__setattr__(self, "_excluded", {frozenset(pair) for pair in self.excludes})
        object.__setattr__(self, "_surface", {name: values for name, *values in self.surfaces})
        object.__setattr__(self, "_pair", {frozenset((p.collision_a, p.collision_b)): p for p in self.pairs})

    def surface(self, collision_a: str, collision_b: str) -> ContactPair | None:
        """The friction, margin and gap of the contacts between ``collision_a`` and ``collision_b``
        (:data:`TERRAIN`: the floor), as MuJoCo combines them: an explicit pair's own; else the
        larger margin and gap of the two collisions' surfaces, and the friction and contact
        dimension of the one of higher priority, or the larger of each at equal priorities (the
        friction by :attr:`friction_rule`); no friction at dimension 1 (against a
        file without a floor surface, the collision's own); None when a collision has no surface
        (the models' contact law decides)."""
        pair = self._pair.get(frozenset((collision_a, collision_b)))
        if pair is not None:
            return pair
        a, b = self.own(collision_a), self.own(collision_b)
        if collision_b == TERRAIN and a is not None and b is None:
            return combined(collision_a, a, collision_b, a)
        return combined(collision_a, a, collision_b, b, self.friction_rule)

    def own(self, collision: str) -> tuple | None:
        """``(friction, margin, gap, condim, priority[, torsion, rolling])`` of ``collision``'s
        surface, None without one."""
        return self._surface.get(collision)

    def filter(self, collision: str) -> tuple[int, int]:
        """``(contype, conaffinity)`` of ``collision``."""
        return self._filter.get(collision, (1, 1))

    def touch(self, link_a: str, collision_a: str, link_b: str, collision_b: str) -> bool:
        """Whether collision ``collision_a`` of description link ``link_a`` and ``collision_b`` of
        ``link_b`` may touch by the filters, welds and excludes (explicit pairs aside)."""
        (type_a, affinity_a), (type_b, affinity_b) = self.filter(collision_a), self.filter(collision_b)
        if not (type_a & affinity_b or type_b & affinity_a) or frozenset((link_a, link_b)) in self._excluded:
            return False
        weld_a, parent_a = self._weld.get(link_a, (-1, -1))
        weld_b, parent_b = self._weld.get(link_b, (-2, -2))
        if weld_a == weld_b:
            return False
        return not (weld_a and weld_b and (weld_a == parent_b or weld_b == parent_a))

    def touches_terrain(self, collision: str) -> bool:
        """Whether ``collision`` touches the terrain (by the filters, excludes or a pair)."""
        return self.terrain is None or collision in self.terrain


@dataclass
class Visual:
    """A visual element: name, shape pose in the link frame ``L_H_G: (4, 4)``, its geometry (as for
    collisions) and its colour ``rgba`` in [0, 1] (URDF ``<material><color>``, SDF
    ``<material><diffuse>``), or None when the file gives none."""

    name: str
    L_H_G: np.ndarray
    geometry: Geometry
    rgba: tuple[float, float, float, float] | None = None
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class LinkDescription:
    """A rigid body. ``inertial`` is None for a massless link (a frame). ``visuals`` are what a
    viewer draws; they take no part in the dynamics."""

    name: str
    inertial: Inertial | None = None
    collisions: list[Collision] = field(default_factory=list)
    location: SourceLocation = field(default_factory=SourceLocation)
    visuals: list[Visual] = field(default_factory=list)


@dataclass
class JointLimits:
    """Position [rad or m], effort [N m or N] and velocity [rad/s or m/s] limits; inf when absent."""

    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf


@dataclass
class Mimic:
    """``q = multiplier * q_joint + offset``: the model's joint couplings, which the simulation
    step enforces (:mod:`jaxsim_like.dynamics.couplings`). An empty ``joint`` is a welded leader
    (``q = offset``, an MJCF joint equality without ``joint2``). ``time_constant`` [s] and
    ``damping_ratio``: the reference with which a violation decays (an MJCF equality's
    ``solref``; MuJoCo's default otherwise), the default of ``SimulationParams.build``.
    ``solimp`` ``(d0, d_width, width, midpoint, power)``: MuJoCo's impedance of the coupling at
    its violation (an MJCF equality's), with which its row gets MuJoCo's compliance ``(1 - d) /
    d inverse_weight``; ``inverse_weight`` [1/(kg m^2) or 1/kg] the approximate inverse mass of
    the row (MuJoCo's ``dof_invweight0`` of the two joints, summed). None (URDF and SDF mimics,
    which have no ``solimp``): an impedance of one and no compliance."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0
    time_constant: float = 0.02
    damping_ratio: float = 1.0
    solimp: tuple[float, float, float, float, float] | None = None
    inverse_weight: float = 0.0


@dataclass
class LoopClosure:
    """A constraint closing a kinematic loop: frame ``F1`` on ``link1`` and frame ``F2`` on
    ``link2`` (an empty name: the world; the name of one of the model's :class:`MocapBody`: that
    moving frame) kept together. ``kind`` ``"connect"``: their origins coincide (3 rows);
    ``"weld"``: their poses coincide (6 rows: origins, and the orientation error ``torque_scale
    * vec(q_F2^-1 q_F1)``, MuJoCo's); the rows of an SDF joint closing a loop about the frames'
    common ``z`` axis (:mod:`jaxsim_like.dynamics.loops`): ``"hinge"`` (5 rows), ``"slider"``
    (5), ``"universal"`` (4: ``F1``'s ``z`` stays normal to ``F2``'s) and ``"screw"`` (5, with
    its ``pitch`` [m/rad]). ``L1_H_F1`` and ``L2_H_F2`` ``(4, 4)`` are the frames in
    their links (in the world for the world, in the body for a mocap body); ``time_constant``
    [s] and ``damping_ratio``: the reference with which a violation decays (MuJoCo's ``solref``);
    ``solimp`` ``(d0, d_width, width, midpoint, power)``: MuJoCo's impedance of the closure at
    the norm of its violation, and ``inverse_weight`` ``(translation [1/kg], rotation [1/(kg
    m^2)])``: the approximate inverse mass of its rows (the sums of MuJoCo's ``body_invweight0``
    of its two bodies), with which the rows get MuJoCo's compliance ``(1 - d) / d
    inverse_weight`` (zero: none). The defaults, for formats without ``solimp`` (SDF), hold the
    closure with the largest impedance (``d`` of one, clipped to
    :data:`~jaxsim_like.simulation.constraint_rows.MAX_IMPEDANCE`) and no compliance: the
    reference alone, ``time_constant`` and ``damping_ratio``, sets how a violation decays."""

    name: str
    kind: str
    link1: str
    link2: str
    L1_H_F1: np.ndarray = field(default_factory=lambda: np.eye(4))
    L2_H_F2: np.ndarray = field(default_factory=lambda: np.eye(4))
    torque_scale: float = 1.0
    time_constant: float = 0.02
    damping_ratio: float = 1.0
    location: SourceLocation = field(default_factory=SourceLocation)
    solimp: tuple[float, float, float, float, float] = (1.0, 1.0, 0.001, 0.5, 2.0)
    inverse_weight: tuple[float, float] = (0.0, 0.0)
    pitch: float = 0.0


@dataclass
class WorldClosure(LoopClosure):
    """A :class:`LoopClosure` between links of two models of a world: ``link1`` of model
    ``model1`` and ``link2`` of model ``model2`` (the models' names)."""

    model1: str = ""
    model2: str = ""


@dataclass
class MocapBody:
    """A moving frame of the world (MJCF ``mocap="true"`` body): its ``name`` and default pose
    ``W_H_B (4, 4)`` (the file's; the simulation step takes its pose as an input), which the
    loop closures of a model may name as a link."""

    name: str
    W_H_B: np.ndarray = field(default_factory=lambda: np.eye(4))
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class BallCone:
    """The cone limit of a ball joint (MJCF ``range`` of a ``ball``): the rotation angle of its
    quaternion stays at most ``angle`` [rad] (in ``(0, pi]``), engaged within ``margin`` [rad],
    with the reference ``time_constant`` [s] and ``damping_ratio`` of its ``solreflimit`` and the
    impedance ``solimp`` of its ``solimplimit`` (MuJoCo's defaults), whose compliance scales with
    ``inverse_weight`` [1/(kg m^2)] (MuJoCo's ``dof_invweight0`` of the joint; 0: none)."""

    angle: float
    margin: float = 0.0
    time_constant: float = 0.02
    damping_ratio: float = 1.0
    solimp: tuple[float, float, float, float, float] = (0.9, 0.95, 0.001, 0.5, 2.0)
    inverse_weight: float = 0.0


@dataclass
class SoftLimit:
    """MuJoCo's soft limit of a hinge or slide joint's range (MJCF ``range`` of a ``limited``
    joint; the range itself is the joint's :class:`JointLimits`): each side is engaged within
    ``margin`` [rad or m], with the reference ``time_constant`` [s] and ``damping_ratio`` of its
    ``solreflimit`` and the impedance ``solimp`` of its ``solimplimit``, whose compliance scales
    with ``inverse_weight`` [1/(kg m^2) or 1/kg] (MuJoCo's ``dof_invweight0`` of the joint)."""

    margin: float = 0.0
    time_constant: float = 0.02
    damping_ratio: float = 1.0
    solimp: tuple[float, float, float, float, float] = (0.9, 0.95, 0.001, 0.5, 2.0)
    inverse_weight: float = 0.0


JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "ball", "screw")


@dataclass
class JointDescription:
    """A joint from ``parent`` to ``child``; see the module docstring for the frames.

    ``damping`` [N m s/rad or N s/m], ``friction`` (Coulomb) [N m or N] and ``armature``, a rotor
    inertia added to the joint's diagonal entry of the mass matrix [kg m^2 or kg] (MJCF only); a
    spring of ``stiffness`` [N m/rad or N/m] pulls the joint towards ``spring_reference`` [rad or
    m] (SDF ``spring_stiffness`` and ``spring_reference``, MJCF ``stiffness`` and ``springref``).
    ``cone``: a ball joint's cone limit (None: unlimited; its ``limits`` are infinite).
    ``soft_limit``: a revolute or prismatic joint's range held as MuJoCo's soft limit (MJCF;
    None: the simulation's spring-damper limit, see :func:`jaxsim_like.simulation.joint_effects`).
    ``pitch`` [m/rad]: a screw joint's advance along ``axis`` per radian turned about it (positive:
    a right-handed thread); zero for every other type.
    """

    name: str
    type: str
    parent: str
    child: str
    P_H_C: np.ndarray = field(default_factory=lambda: np.eye(4))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    axis_point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    limits: JointLimits = field(default_factory=JointLimits)
    damping: float = 0.0
    friction: float = 0.0
    mimic: Mimic | None = None
    location: SourceLocation = field(default_factory=SourceLocation)
    armature: float = 0.0
    stiffness: float = 0.0
    spring_reference: float = 0.0
    cone: BallCone | None = None
    soft_limit: SoftLimit | None = None
    pitch: float = 0.0


@dataclass
class FrameDescription:
    """An extra frame rigidly attached to ``link`` at ``L_H_F: (4, 4)``."""

    name: str
    link: str
    L_H_F: np.ndarray = field(default_factory=lambda: np.eye(4))
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class TendonWrap:
    """A sphere or cylinder (``kind``) of ``radius`` [m] fixed to link ``body`` at ``B_H_G (4, 4)``
    (the cylinder along its z axis), which a spatial tendon's segment wraps around when its
    straight line would cross it (MJCF ``<spatial><geom geom="...">``)."""

    body: str
    kind: str
    B_H_G: np.ndarray
    radius: float


@dataclass
class TendonSegment:
    """A piece of a spatial tendon from the origin of frame ``frame_a`` to that of ``frame_b``
    (frames of the description: MJCF sites): straight, or around its ``wrap`` where the straight
    line would cross it; its length counted ``scale`` times (``1 / divisor`` of the pulley it
    follows, 1 before any)."""

    frame_a: str
    frame_b: str
    scale: float = 1.0
    wrap: TendonWrap | None = None


@dataclass
class TendonDescription:
    """A fixed tendon (MJCF ``<tendon><fixed>``): the length ``L = length0 + sum_j coefficients[j]
    q_j`` [m or rad] of the joint positions ``q`` (measured from MuJoCo's ``qpos0``, so that
    ``length0`` is the length there), by joint name; or a spatial tendon (``<tendon><spatial>``
    through sites), with no coefficients and ``length0`` zero: ``L = sum_k scale_k |p_b - p_a|``
    over its ``segments``. Its passive force along ``L`` [N or N m]:
    ``stiffness`` [N/m] towards the dead band ``spring_length (lower, upper)`` [m] (zero inside),
    viscous ``damping`` [N s/m] and Coulomb ``friction`` [N]; ``armature`` [kg] adds inertia
    along ``L``. ``limited``: ``lower <= L <= upper`` (``range``), engaged within ``margin`` [m],
    with the reference ``time_constant`` [s] and ``damping_ratio`` of its ``solreflimit``, the
    impedance ``solimp (5,)`` of its ``solimplimit`` and its approximate inverse mass
    ``inverse_weight`` (MuJoCo's ``tendon_invweight0``; zero: a hard limit)."""

    name: str
    coefficients: dict[str, float]
    length0: float = 0.0
    stiffness: float = 0.0
    spring_length: tuple[float, float] = (0.0, 0.0)
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0
    limited: bool = False
    range: tuple[float, float] = (-np.inf, np.inf)
    margin: float = 0.0
    time_constant: float = 0.02
    damping_ratio: float = 1.0
    solimp: tuple[float, ...] = (0.9, 0.95, 0.001, 0.5, 2.0)
    inverse_weight: float = 0.0
    location: SourceLocation = field(default_factory=SourceLocation)
    segments: list[TendonSegment] = field(default_factory=list)


@dataclass
class FluidGeomDescription:
    """A geom in a medium by MuJoCo's ellipsoid model (MJCF ``fluidshape="ellipsoid"``): the
    ellipsoid of ``semiaxes (3,)`` [m] at ``B_H_G (4, 4)`` in its ``body`` (a link name of the
    description), its ``coefficients (5,)`` (MJCF ``fluidcoef``: blunt drag, slender drag,
    angular drag, Kutta lift, Magnus lift), the ``interaction`` that scales them, and the
    ellipsoid's ``virtual_mass (3,)`` [m^3] and ``virtual_inertia (3,)`` [m^5] along its axes
    (times the density: the added mass [kg] and moments of inertia [kg m^2])."""

    name: str
    body: str
    B_H_G: np.ndarray
    semiaxes: np.ndarray
    coefficients: np.ndarray
    interaction: float = 1.0
    virtual_mass: np.ndarray = field(default_factory=lambda: np.zeros(3))
    virtual_inertia: np.ndarray = field(default_factory=lambda: np.zeros(3))
    location: SourceLocation = field(default_factory=SourceLocation)


@dataclass
class FluidDescription:
    """A medium of ``density`` [kg/m^3] and ``viscosity`` [Pa s] moving at ``wind (3,)`` [m/s]
    (world axes), acting on the ``bodies`` (link names of the description) by MuJoCo's
    inertia-box model and on the ``geoms`` by its ellipsoid model (MJCF ``<option density
    viscosity wind>``, geoms' ``fluidshape``)."""

    density: float
    viscosity: float
    wind: np.ndarray = field(default_factory=lambda: np.zeros(3))
    bodies: list[str] = field(default_factory=list)
    geoms: list[FluidGeomDescription] = field(default_factory=list)


@dataclass
class TendonEqualityDescription:
    """``L1 - L1_0 = offset + multiplier (L2 - L2_0)`` between the lengths of tendons ``tendon1``
    and ``tendon2`` (an empty ``tendon2``: ``L1 - L1_0 = offset``), ``L_0`` their lengths at zero
    joint positions: MJCF ``<equality><tendon>`` with ``polycoef="offset multiplier 0 0 0"``.
    ``time_constant`` [s] and ``damping_ratio``: the reference of its ``solref``; ``solimp``: its
    impedance, with which its row gets MuJoCo's compliance ``(1 - d) / d inverse_weight``,
    ``inverse_weight`` [1/kg] the sum of the two tendons' ``tendon_invweight0`` (None: an
    impedance of one and no compliance)."""

    name: str
    tendon1: str
    tendon2: str = ""
    offset: float = 0.0
    multiplier: float = 1.0
    time_constant: float = 0.02
    damping_ratio: float = 1.0
    location: SourceLocation = field(default_factory=SourceLocation)
    solimp: tuple[float, float, float, float, float] | None = None
    inverse_weight: float = 0.0


@dataclass
class ActuatorDescription:
    """A joint actuator (MJCF), as MuJoCo applies it to its joint: the joint force [N m or N] is
    ``gear * clip(f, *force_range)`` for the control ``u`` in ``ctrl_range`` with, by ``kind``,
    ``f = gain u`` (``motor``), ``f = kp (u - gear q) - kv gear q_dot`` (``position``) or
    ``f = kv (u - gear q_dot)`` (``velocity``). Unbounded ranges are ``(-inf, inf)``. A motor on
    a tendon (fixed or spatial) names the ``tendon`` (and no ``joint``): the force ``gear *
    clip(gain u)`` acts along the tendon's length, the joint torques ``gear clip(gain u) dL/dq``.
    On a ball joint, ``gear_axis (3,)`` (the joint's child frame; ``gear`` is then one) stands for
    the gear: ``q`` is ``gear_axis . log(Q)``, ``q_dot`` is ``gear_axis . omega`` and the force acts
    as the torques ``gear_axis clip(f)`` on its three degrees of freedom (None elsewhere)."""

    name: str
    joint: str
    kind: str
    gear: float = 1.0
    gain: float = 1.0
    kp: float = 0.0
    kv: float = 0.0
    ctrl_range: tuple[float, float] = (-np.inf, np.inf)
    force_range: tuple[float, float] = (-np.inf, np.inf)
    location: SourceLocation = field(default_factory=SourceLocation)
    tendon: str = ""
    gear_axis: tuple[float, float, float] | None = None


@dataclass
class ModelDescription:
    """A kinematic tree as written in the file, fixed joints included.

    ``root`` is the root link; ``M_H_root: (4, 4)`` its pose in the model frame and
    ``W_H_M: (4, 4)`` the model frame in the world (the SDF ``<model><pose>``, or the pose
    given by a world file). ``fixed_to_world`` is True when the file welds the root to the
    world (URDF root named ``world``, SDF ``<static>`` or a joint to ``world``). ``actuators``
    are the file's joint and tendon actuators, ``tendons`` its fixed and spatial tendons,
    ``tendon_equalities`` the equalities between their lengths, ``loops`` its
    :class:`LoopClosure` constraints, ``mocap_bodies`` the moving frames they hold on
    (:class:`MocapBody`), ``fluid`` the medium its bodies move in and ``collision_rules`` which
    of its collisions touch (MJCF only; None: every collision of another link, see
    :class:`CollisionRules`).
    """

    name: str
    links: list[LinkDescription]
    joints: list[JointDescription]
    frames: list[FrameDescription] = field(default_factory=list)
    root: str = ""
    M_H_root: np.ndarray = field(default_factory=lambda: np.eye(4))
    W_H_M: np.ndarray = field(default_factory=lambda: np.eye(4))
    fixed_to_world: bool = False
    static: bool = False
    source: str | None = None
    actuators: list[ActuatorDescription] = field(default_factory=list)
    loops: list[LoopClosure] = field(default_factory=list)
    mocap_bodies: list[MocapBody] = field(default_factory=list)
    tendons: list[TendonDescription] = field(default_factory=list)
    tendon_equalities: list[TendonEqualityDescription] = field(default_factory=list)
    fluid: FluidDescription | None = None
    collision_rules: CollisionRules | None = None

    def link(self, name: str) -> LinkDescription:
        """The link called ``name`` (KeyError if none)."""
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(name)

    def joint(self, name: str) -> JointDescription:
        """The joint called ``name`` (KeyError if none)."""
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(name)

    def replace(self, **changes) -> "ModelDescription":
        """A shallow copy with some fields changed."""
        return dataclasses.replace(self, **changes)


@dataclass
class PhysicsDescription:
    """A world's physics settings: step size [s], real-time factor, engine type (SDF ``<physics>``,
    ``mujoco`` for MJCF ``<option>``) and the nearest of jaxsim_like's integrators to the file's
    (``""`` when the file names none)."""

    step_size: float = 0.001
    real_time_factor: float = 1.0
    type: str = ""
    integrator: str = ""


@dataclass
class TerrainDescription:
    """A world file's static geometry as a terrain (``jaxsim_like.simulation.Terrain.of``): the
    ground, the plane through ``ground_point (3,)`` [m] of unit normal ``ground_normal (3,)`` (world
    frame; both None when the file has no ground: the world's default is taken), and static boxes
    ``box_transforms (B, 4, 4)`` (``W_H_box``) of ``box_half_extents (B, 3)`` [m], named
    ``box_names``."""

    ground_normal: np.ndarray | None = None
    ground_point: np.ndarray | None = None
    box_transforms: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    box_half_extents: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    box_names: tuple[str, ...] = ()


@dataclass
class WorldDescription:
    """An SDF world (or an MJCF file, one model per tree): its name, gravity ``(3,)`` in m/s^2,
    physics settings, models with poses, the ``closures`` between links of two of its models
    (MJCF connects and welds across trees) and its static geometry as a ``terrain`` (MJCF: the
    world body's floor, boxes and other planes; None for SDF worlds, whose static models are
    models)."""

    name: str
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.80665]))
    physics: PhysicsDescription = field(default_factory=PhysicsDescription)
    models: list[ModelDescription] = field(default_factory=list)
    source: str | None = None
    closures: list[WorldClosure] = field(default_factory=list)
    terrain: TerrainDescription | None = None
