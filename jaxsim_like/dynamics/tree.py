"""A numeric rigid-body tree (numpy) and the lumping of fixed joints into their parents.

This is the bridge between a :class:`~jaxsim_like.parsers.description.ModelDescription` and the
:class:`~jaxsim_like.dynamics.model.Model` pytree: it holds every link (fixed joints included),
merges bodies welded by fixed joints (mass, COM and inertia by the parallel-axis theorem),
keeps the merged links as frames, and orders the remaining links by depth so that each level
of the tree is a contiguous slice. Collidable points and solid collision shapes (spheres, boxes,
capsules, cylinders, convex hulls of meshes: what collisions test points and shapes against) follow their link into its body, and keep
the name of the description link they came from (their ``source``) and of their collision element. A ball joint becomes three
rotational degrees of freedom on a chain of two massless links and its child (see
:func:`expand_ball_joints`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..parsers.description import LinkDescription, Mimic, ModelDescription
from ..parsers.errors import ModelLoadError
from ..parsers.hulls import Hull
from ..parsers.shapes import SweptPoints, mesh_hull

ROOT, REVOLUTE, PRISMATIC, FIXED, BALL, SCREW = "root", "revolute", "prismatic", "fixed", "ball", "screw"
BALL_AXES = ("x", "y", "z")
"""The three degrees of freedom of a ball joint: rotations about the child frame's axes."""
SPHERE, BOX, CAPSULE, CYLINDER, HULL, ELLIPSOID = "sphere", "box", "capsule", "cylinder", "hull", "ellipsoid"


def rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' rotation ``(3, 3)`` about a unit ``axis`` by ``angle`` [rad]."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def quaternion_rotation(quaternion: np.ndarray) -> np.ndarray:
    """The rotation ``(3, 3)`` of a wxyz ``quaternion (4,)`` (normalised here)."""
    w, x, y, z = np.asarray(quaternion, dtype=float) / np.linalg.norm(quaternion)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def joint_motion(kind: str, axis: np.ndarray, point: np.ndarray, position: float | np.ndarray, pitch: float = 0.0) -> np.ndarray:
    """``C0_H_C (4, 4)``: the child frame moved by the joint at ``position``, in its zero pose: a
    scalar [rad or m] (a screw joint of ``pitch`` [m/rad] also moves ``pitch * position`` along
    its axis), or for a degree of freedom of a ball joint (kind ``BALL``) the quaternion ``(4,)``
    (wxyz) it turns by about ``point`` (the identity for the second and third)."""
    H = np.eye(4)
    if kind in (REVOLUTE, SCREW, BALL):
        R = quaternion_rotation(position) if kind == BALL else rotation_about(axis, position)
        H[:3, :3] = R
        H[:3, 3] = (np.eye(3) - R) @ point + (pitch * position * axis if kind == SCREW else 0.0)
    elif kind == PRISMATIC:
        H[:3, 3] = axis * position
    return H


@dataclass(frozen=True, eq=False)
class Shape:
    """A solid collision shape: ``kind`` (sphere, box, capsule, cylinder, hull or ellipsoid), its pose ``L_H_S (4, 4)``
    in the link frame, ``size (3,)`` [m] (box: half extents; sphere: radius, 0, 0; capsule: radius,
    half length of its segment along its z axis, 0; cylinder: radius, half length along its z axis, 0;
    hull: the radius of the ball about its origin that holds it, 0, 0; ellipsoid: its radii along its axes)
    ``source``, the description link it came from, ``collision``, the name of its collision
    element, and a hull's ``hull`` (in the shape frame; None for the other kinds)."""

    kind: str
    L_H_S: np.ndarray
    size: np.ndarray
    source: str
    collision: str = ""
    hull: Hull | None = None

    def moved(self, B_H_L: np.ndarray) -> "Shape":
        """The same shape with its pose expressed in frame B, given ``B_H_L (4, 4)``."""
        return dataclasses.replace(self, L_H_S=B_H_L @ self.L_H_S)


def link_shapes(link: LinkDescription, mesh_hulls: int | None = None, ellipsoids: bool = False) -> list[Shape]:
    """The sphere, box, capsule and cylinder collisions of ``link`` as :class:`Shape`, with
    ``mesh_hulls`` its meshes as hulls of at most that many vertices (those with volume), and
    with ``ellipsoids`` its ellipsoids (other kinds are skipped)."""
    shapes = []
    for collision in link.collisions:
        geometry = collision.geometry
        if geometry.type == "mesh" and mesh_hulls is not None and (hull := mesh_hull(geometry, mesh_hulls)) is not None:
            shapes.append(Shape(HULL, np.asarray(collision.L_H_G, dtype=float), np.array([hull.radius, 0.0, 0.0]), link.name,
                                collision.name, hull))
            continue
        if geometry.type == SPHERE:
            size = (geometry.radius, 0.0, 0.0)
        elif geometry.type == BOX:
            size = tuple(0.5 * np.asarray(geometry.size, dtype=float))
        elif geometry.type in (CAPSULE, CYLINDER):
            size = (geometry.radius, 0.5 * geometry.length, 0.0)
        elif geometry.type == ELLIPSOID and ellipsoids:
            size = tuple(np.asarray(geometry.size, dtype=float))
        else:
            continue
        shapes.append(Shape(geometry.type, np.asarray(collision.L_H_G, dtype=float), np.asarray(size, dtype=float), link.name, collision.name))
    return shapes


@dataclass
class RigidTree:
    """Links in topological order (``parent[i] < i``); per-link arrays describe the link and
    the joint that connects it to its parent (unused for the root).

    ``P_H_C (N, 4, 4)``: child link frame in the parent link frame at zero position.
    ``pitch (N,)`` [m/rad]: a screw joint's advance along its axis per radian (0 for other kinds).
    ``com (N, 3)``: COM in the link frame; ``inertia (N, 3, 3)``: about the COM, link axes.
    ``points``: centres of the collidable (swept) points ``(P_i, 3)`` per link, in the link frame,
    of radii ``radii (P_i,)`` [m]; ``point_source``: the description link of each of them
    (``P_i`` names per link); ``point_collision``: the collision element of each (``""`` where
    not known).
    ``shapes``: the solid collision shapes of each link (:class:`Shape`, poses in the link frame).
    ``frames``: ``(name, link index, L_H_F (4, 4))``.
    """

    link_names: list[str]
    parent: list[int]
    joint_names: list[str | None]
    joint_kind: list[str]
    continuous: list[bool]
    P_H_C: np.ndarray
    axis: np.ndarray
    axis_point: np.ndarray
    pitch: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    effort: np.ndarray
    velocity: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    armature: np.ndarray
    stiffness: np.ndarray
    spring_reference: np.ndarray
    mimic: list[Mimic | None]
    points: list[np.ndarray]
    radii: list[np.ndarray]
    point_source: list[tuple[str, ...]]
    shapes: list[list[Shape]]
    point_collision: list[tuple[str, ...]] = field(default_factory=list)
    frames: list[tuple[str, int, np.ndarray]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.link_names)

    def depth(self) -> np.ndarray:
        """Depth of every link (root: 0)."""
        depth = np.zeros(self.size, dtype=int)
        for i in range(1, self.size):
            depth[i] = depth[self.parent[i]] + 1
        return depth


def _description_order(description: ModelDescription) -> list[str]:
    children: dict[str, list[str]] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append(joint.child)
    order, stack = [], [description.root]
    while stack:
        name = stack.pop(0)
        order.append(name)
        stack[:0] = children.get(name, [])
    return order


def _point_collisions(link: LinkDescription, collidable_points, count: int, needed: bool) -> tuple[str, ...]:
    """The collision element of each of the ``count`` points ``collidable_points(link)`` gave:
    that of a link's single collision; with several, and only where ``needed``, by the points each
    collision alone gives, if they add up (``""``: not known)."""
    if len(link.collisions) == 1:
        return (link.collisions[0].name,) * count
    if not needed or not link.collisions:
        return ("",) * count
    per = [len(SweptPoints.of(collidable_points(dataclasses.replace(link, collisions=[c]))).centres) for c in link.collisions]
    if sum(per) != count:
        return ("",) * count
    return tuple(c.name for c, n in zip(link.collisions, per) for _ in range(n))


def tree_from_description(description: ModelDescription, collidable_points, mesh_hulls: int | None = None,
                          ellipsoids: bool = False) -> RigidTree:
    """The full tree of a description, fixed joints included, in depth-first order from the root.

    ``collidable_points(link)`` gives each link's contact points in its frame: :class:`SweptPoints`,
    or centres ``(P, 3)`` of radius 0; ``mesh_hulls`` and ``ellipsoids``: see :func:`link_shapes`.
    """
    order = _description_order(description)
    index = {name: i for i, name in enumerate(order)}
    joint_of_child = {joint.child: joint for joint in description.joints}
    size = len(order)
    tree = RigidTree(
        link_names=order,
        parent=[-1] * size,
        joint_names=[None] * size,
        joint_kind=[ROOT] * size,
        continuous=[False] * size,
        P_H_C=np.tile(np.eye(4), (size, 1, 1)),
        axis=np.tile([1.0, 0.0, 0.0], (size, 1)),
        axis_point=np.zeros((size, 3)),
        pitch=np.zeros(size),
        mass=np.zeros(size),
        com=np.zeros((size, 3)),
        inertia=np.zeros((size, 3, 3)),
        lower=np.full(size, -np.inf),
        upper=np.full(size, np.inf),
        effort=np.full(size, np.inf),
        velocity=np.full(size, np.inf),
        damping=np.zeros(size),
        friction=np.zeros(size),
        armature=np.zeros(size),
        stiffness=np.zeros(size),
        spring_reference=np.zeros(size),
        mimic=[None] * size,
        points=[np.zeros((0, 3))] * size,
        radii=[np.zeros(0)] * size,
        point_source=[()] * size,
        shapes=[[] for _ in range(size)],
        point_collision=[()] * size,
    )
    for i, name in enumerate(order):
        link = description.link(name)
        if link.inertial is not None:
            R, p = link.inertial.L_H_I[:3, :3], link.inertial.L_H_I[:3, 3]
            tree.mass[i] = link.inertial.mass
            tree.com[i] = p
            tree.inertia[i] = R @ link.inertial.inertia @ R.T
        tree.points[i], tree.radii[i] = SweptPoints.of(collidable_points(link))
        tree.point_source[i] = (name,) * len(tree.points[i])
        tree.point_collision[i] = _point_collisions(link, collidable_points, len(tree.points[i]), description.collision_rules is not None)
        tree.shapes[i] = link_shapes(link, mesh_hulls, ellipsoids)
        joint = joint_of_child.get(name)
        if joint is None:
            continue
        if joint.type in ("floating", "planar"):
            raise ModelLoadError(
                f"{joint.type} joints inside the tree are not supported",
                file=joint.location.file, line=joint.location.line, element=joint.location.element,
            )
        tree.parent[i] = index[joint.parent]
        tree.joint_names[i] = joint.name
        tree.joint_kind[i] = {"continuous": REVOLUTE}.get(joint.type, joint.type)
        tree.continuous[i] = joint.type == "continuous"
        tree.P_H_C[i] = joint.P_H_C
        tree.axis[i] = np.asarray(joint.axis, dtype=float) / np.linalg.norm(joint.axis)
        tree.axis_point[i] = joint.axis_point
        tree.pitch[i] = joint.pitch
        if joint.type != "continuous":
            tree.lower[i], tree.upper[i] = joint.limits.lower, joint.limits.upper
        tree.effort[i], tree.velocity[i] = joint.limits.effort, joint.limits.velocity
        tree.damping[i], tree.friction[i], tree.armature[i] = joint.damping, joint.friction, joint.armature
        tree.stiffness[i], tree.spring_reference[i] = joint.stiffness, joint.spring_reference
        tree.mimic[i] = joint.mimic
    for frame in description.frames:
        tree.frames.append((frame.name, index[frame.link], np.asarray(frame.L_H_F, dtype=float)))
    return tree


def merge_inertia(
    mass_a: float, com_a: np.ndarray, inertia_a: np.ndarray,
    mass_b: float, com_b: np.ndarray, inertia_b: np.ndarray,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM and inertia about the new COM of two bodies given in the same frame."""
    mass = mass_a + mass_b
    com = (mass_a * com_a + mass_b * com_b) / mass if mass > 0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for m, c, I in ((mass_a, com_a, inertia_a), (mass_b, com_b, inertia_b)):
        d = c - com
        inertia = inertia + I + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def lump_fixed_joints(tree: RigidTree) -> RigidTree:
    """A tree without fixed joints: each link welded to its parent is merged into the nearest
    moving ancestor (its body) and stays addressable as a frame of that body.

    The result keeps the input (topological) order of the moving links.
    """
    body = list(range(tree.size))
    B_H_L = np.tile(np.eye(4), (tree.size, 1, 1))
    mass, com, inertia = tree.mass.copy(), tree.com.copy(), tree.inertia.copy()
    points = [p.copy() for p in tree.points]
    radii = [r.copy() for r in tree.radii]
    point_source = list(tree.point_source)
    point_collision = list(tree.point_collision)
    shapes = [list(s) for s in tree.shapes]
    frames: list[tuple[str, int, np.ndarray]] = []
    for i in range(1, tree.size):
        if tree.joint_kind[i] != FIXED:
            continue
        b = body[tree.parent[i]]
        body[i] = b
        B_H_L[i] = B_H_L[tree.parent[i]] @ tree.P_H_C[i]
        R, p = B_H_L[i][:3, :3], B_H_L[i][:3, 3]
        mass[b], com[b], inertia[b] = merge_inertia(
            mass[b], com[b], inertia[b], tree.mass[i], R @ tree.com[i] + p, R @ tree.inertia[i] @ R.T
        )
        points[b] = np.concatenate([points[b], points[i] @ R.T + p])
        radii[b] = np.concatenate([radii[b], radii[i]])
        point_source[b] = point_source[b] + point_source[i]
        point_collision[b] = point_collision[b] + point_collision[i]
        shapes[b] = shapes[b] + [shape.moved(B_H_L[i]) for shape in shapes[i]]
        frames.append((tree.link_names[i], b, B_H_L[i]))
    for name, link, L_H_F in tree.frames:
        frames.append((name, body[link], B_H_L[link] @ L_H_F))

    kept = [i for i in range(tree.size) if tree.joint_kind[i] != FIXED]
    lumped = dataclasses.replace(
        tree,
        parent=[body[tree.parent[i]] if i else -1 for i in range(tree.size)],
        P_H_C=np.stack([B_H_L[tree.parent[i]] @ tree.P_H_C[i] if i else np.eye(4) for i in range(tree.size)]),
        mass=mass,
        com=com,
        inertia=inertia,
        points=points,
        radii=radii,
        point_source=point_source,
        point_collision=point_collision,
        shapes=shapes,
        frames=frames,
    )
    return _select(lumped, kept)


def _select(tree: RigidTree, order: list[int]) -> RigidTree:
    """The links ``order`` (closed under parents) of ``tree``, renumbered in that order."""
    new_index = {old: new for new, old in enumerate(order)}
    changes = {}
    for field_ in dataclasses.fields(RigidTree):
        values = getattr(tree, field_.name)
        if field_.name == "parent":
            changes["parent"] = [new_index[values[i]] if values[i] >= 0 else -1 for i in order]
        elif field_.name == "frames":
            changes["frames"] = [(name, new_index[link], H) for name, link, H in values]
        elif isinstance(values, np.ndarray):
            changes[field_.name] = values[order]
        else:
            changes[field_.name] = [values[i] for i in order]
    return RigidTree(**changes)


def sort_by_depth(tree: RigidTree) -> RigidTree:
    """The same tree renumbered by depth (stable), so that each level is a contiguous slice."""
    depth = tree.depth()
    return _select(tree, sorted(range(tree.size), key=lambda i: (depth[i], i)))


def ball_dof_names(joint: str) -> tuple[str, str, str]:
    """The names of the three degrees of freedom of ball joint ``joint``: ``joint:x``, ``:y``, ``:z``."""
    return tuple(f"{joint}:{axis}" for axis in BALL_AXES)


def expand_ball_joints(tree: RigidTree) -> RigidTree:
    """The same tree with each ball joint as three rotational degrees of freedom about the child
    frame's x, y and z axes through the joint's anchor (``axis_point``, child frame): two massless
    links ``child::joint:x`` and ``child::joint:y`` (no points, shapes or frames) and the child,
    chained with identity transforms, all of kind ``ball``. The first holds the joint's zero pose
    ``P_H_C``; the model rotates it by the joint's quaternion. Each degree of freedom keeps the
    joint's damping, friction, armature, stiffness, effort and velocity limits; its position
    limits are infinite. A tree without ball joints is returned as it is."""
    if BALL not in tree.joint_kind:
        return tree
    source, new_index = [], {}
    for i, kind in enumerate(tree.joint_kind):
        source.extend([i, i, i] if kind == BALL else [i])
        new_index[i] = len(source) - 1
    changes = {}
    for field_ in dataclasses.fields(RigidTree):
        values = getattr(tree, field_.name)
        if field_.name == "frames":
            changes["frames"] = [(name, new_index[link], H) for name, link, H in values]
        elif field_.name != "parent":
            changes[field_.name] = values[source] if isinstance(values, np.ndarray) else [values[i] for i in source]
    expanded = RigidTree(parent=[new_index[tree.parent[i]] if tree.parent[i] >= 0 else -1 for i in source], **changes)
    for k, i in enumerate(source):
        if tree.joint_kind[i] != BALL:
            continue
        axis = k - (new_index[i] - 2)
        names = ball_dof_names(tree.joint_names[i])
        expanded.joint_names[k] = names[axis]
        expanded.axis[k] = np.eye(3)[axis]
        expanded.lower[k], expanded.upper[k], expanded.spring_reference[k] = -np.inf, np.inf, 0.0
        if axis > 0:
            expanded.parent[k] = k - 1
            expanded.P_H_C[k] = np.eye(4)
        if axis < 2:
            expanded.link_names[k] = f"{tree.link_names[i]}::{names[axis]}"
            expanded.mass[k], expanded.com[k], expanded.inertia[k] = 0.0, np.zeros(3), np.zeros((3, 3))
            expanded.points[k], expanded.radii[k], expanded.point_source[k] = np.zeros((0, 3)), np.zeros(0), ()
            expanded.point_collision[k] = ()
            expanded.shapes[k] = []
            expanded.mimic[k] = None
    return expanded


def lock_joints(tree: RigidTree, positions: dict[str, float | np.ndarray]) -> RigidTree:
    """The same tree with the named moving joints turned fixed at the given positions (see
    :func:`joint_motion`)."""
    tree = dataclasses.replace(tree, joint_kind=list(tree.joint_kind), P_H_C=tree.P_H_C.copy())
    for i, name in enumerate(tree.joint_names):
        if name in positions:
            motion = joint_motion(tree.joint_kind[i], tree.axis[i], tree.axis_point[i], positions[name], tree.pitch[i])
            tree.P_H_C[i] = tree.P_H_C[i] @ motion
            tree.joint_kind[i] = FIXED
    return tree
