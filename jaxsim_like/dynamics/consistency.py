"""Physical consistency of the bodies the dynamics see (numpy): checks after fixed-joint lumping,
and the documented regularisations applied, with one :class:`ModelLoadWarning` each, where a
body is still inconsistent.

Inertias are checked where physics uses them: on each body left after lumping (a moving link
with every link welded to it), not on each link of the file, so a point mass, a massless frame
or a dummy link with a degenerate inertia welded to a real body is valid. A welded root (fixed
base) does not move and is not checked. The rules:

- **Inconsistent inertia.** A body's rotational inertia about its COM, with principal moments
  ``l1 <= l2 <= l3``, is consistent when ``l1 >= -tol`` and ``l1 + l2 >= l3 - tol``, with
  ``tol = 1e-6 max|l| + 1e-12 L`` and ``L`` the largest principal moment of any body of the
  model (so that rounding noise such as moments of 1e-20 kg m^2 counts as zero); zero moments
  (point masses, rods) are consistent. Otherwise the principal axes are kept and each moment is
  clipped to at least ``f = 1e-6 l3`` (``f = 0``, a point mass, if no moment is positive); then,
  if ``l1 + l2 < l3``, the moments move by ``d = (l3 - l1 - l2) / 3`` onto the plane
  ``l1 + l2 = l3`` (``l1 + d, l2 + d, l3 - d``). For non-negative moments this is the nearest
  consistent inertia in the Frobenius norm. Mass and COM are unchanged; the correction is a pure
  rotational inertia added to the body, so it survives any later lumping
  (:func:`~jaxsim_like.dynamics.reduce`).
- **Massless moving subtree.** A moving body whose subtree (itself and every body below it) has
  zero mass would make the mass matrix singular and forward dynamics infinite. Each body of such
  a subtree gets ``REGULARISATION = 1e-4`` of a reference body, its nearest ancestor body with
  mass (the heaviest body if none): mass ``1e-4 m_r`` at its link origin and an isotropic inertia
  ``1e-4 max(tr(I_r) / 3, m_r (1 cm)^2)`` added about it. Every body of the subtree then has a
  positive definite spatial inertia. The total mass grows by those small masses.
- **Singular mass matrix.** Point masses (massive links exported with a zero inertia) are valid,
  but joints that can only turn one about its own centre of mass make the mass matrix singular.
  The joint-space mass matrix is computed at zero position; for each direction of it below
  ``1e-12`` of its largest eigenvalue, every point mass moved by those joints becomes a solid
  sphere of radius 1 cm (``0.4 m (0.01 m)^2`` about each axis, mass unchanged); if there is no
  point mass, every massless body they move gets the mass and inertia of the rule above (for
  redundant joints, such as four slides in one MJCF body). If the matrix is still singular, a
  warning says so. Only the zero position is checked: a singularity elsewhere is not detected.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..parsers.description import ModelDescription, SourceLocation
from ..parsers.errors import ModelLoadError, warn
from .tree import BALL, FIXED, REVOLUTE, SCREW, RigidTree

REGULARISATION = 1e-4
_RELATIVE_TOLERANCE = 1e-6
_MODEL_TOLERANCE = 1e-12
_FLOOR = 1e-6
_POINT_RADIUS = 0.01


def is_consistent(moments: np.ndarray, scale: float = 0.0) -> np.ndarray:
    """Whether sorted principal moments ``(..., 3)`` [kg m^2] are non-negative and satisfy the triangle
    inequality, up to the tolerance of the module docstring (``scale``: the model's largest moment)."""
    moments = np.asarray(moments, dtype=float)
    tolerance = _RELATIVE_TOLERANCE * np.abs(moments).max(axis=-1) + _MODEL_TOLERANCE * scale
    return (moments[..., 0] >= -tolerance) & (moments[..., 0] + moments[..., 1] >= moments[..., 2] - tolerance)


def consistent_moments(moments: np.ndarray) -> np.ndarray:
    """The regularised principal moments ``(3,)`` of sorted ``moments (3,)`` (module docstring's rule)."""
    floor = _FLOOR * max(float(moments[2]), 0.0)
    fixed = np.maximum(moments, floor)
    excess = fixed[2] - fixed[0] - fixed[1]
    if excess > 0.0:
        fixed = fixed + excess / 3.0 * np.array([1.0, 1.0, -1.0])
    return fixed


def consistent_inertia(inertia: np.ndarray) -> np.ndarray:
    """The regularised rotational inertia ``(3, 3)`` of a symmetric ``inertia (3, 3)``, same principal axes."""
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    return (axes * consistent_moments(moments)) @ axes.T


def _where(description: ModelDescription, name: str) -> SourceLocation:
    links = {link.name: link for link in description.links}
    location = (links[name].location if name in links else SourceLocation()).within(description.source)
    return SourceLocation(location.file, location.line, location.element or f'<link name="{name}">')


def _report(description: ModelDescription, name: str, message: str) -> None:
    where = _where(description, name)
    warn(message, file=where.file, line=where.line, element=where.element)


def _members(tree: RigidTree, description: ModelDescription) -> list[list[str]]:
    """For each body, the description links with an inertial welded into it (itself excluded)."""
    with_inertial = {link.name for link in description.links if link.inertial is not None}
    members: list[list[str]] = [[] for _ in range(tree.size)]
    for name, body, _ in tree.frames:
        if name in with_inertial:
            members[body].append(name)
    return members


def _fix_inertias(tree: RigidTree, description: ModelDescription, moving: np.ndarray) -> np.ndarray:
    inertia = tree.inertia.copy()
    moments = np.linalg.eigvalsh(0.5 * (inertia + np.swapaxes(inertia, 1, 2)))
    scale = float(np.abs(moments).max(initial=0.0))
    flagged = np.flatnonzero(moving & ~is_consistent(moments, scale))
    members = _members(tree, description) if flagged.size else []
    for b in flagged:
        inertia[b] = consistent_inertia(inertia[b])
        lumped = f" (with the welded links {', '.join(repr(m) for m in members[b])})" if members[b] else ""
        reason = "negative principal moment" if moments[b][0] < 0 else "breaks the triangle inequality I1 + I2 >= I3"
        _report(
            description,
            tree.link_names[b],
            f"inertia of body '{tree.link_names[b]}'{lumped} is not physically consistent ({reason}): "
            f"principal moments {_numbers(moments[b])} kg m^2 about the COM; regularised to the nearest "
            f"consistent ones {_numbers(consistent_moments(moments[b]))} (same axes, mass and COM)",
        )
    return inertia


def _numbers(values: np.ndarray) -> str:
    return "[" + ", ".join(f"{value:.6g}" for value in values) + "]"


def _subtree_mass(tree: RigidTree) -> np.ndarray:
    mass = tree.mass.astype(float).copy()
    for i in range(tree.size - 1, 0, -1):
        mass[tree.parent[i]] += mass[i]
    return mass


def _reference(tree: RigidTree, file_mass: np.ndarray, b: int) -> int:
    """The nearest ancestor body of ``b`` with mass in the file, else the heaviest body."""
    reference = tree.parent[b]
    while reference >= 0 and file_mass[reference] <= 0.0:
        reference = tree.parent[reference]
    return int(np.argmax(file_mass)) if reference < 0 else reference


def _added_inertia(file_mass: np.ndarray, file_inertia: np.ndarray, reference: int) -> float:
    """The isotropic regularising inertia [kg m^2] taken from body ``reference``."""
    return REGULARISATION * max(np.trace(file_inertia[reference]) / 3.0, file_mass[reference] * _POINT_RADIUS**2)


def _fill_massless(tree: RigidTree, description: ModelDescription, moving: np.ndarray, inertia: np.ndarray):
    """Masses, COMs and inertias with the massless moving subtrees filled; one warning per subtree."""
    mass, com = tree.mass.astype(float).copy(), tree.com.copy()
    subtree = _subtree_mass(tree)
    massless = [b for b in range(tree.size) if moving[b] and subtree[b] <= 0.0]
    if not massless:
        return mass, com, inertia
    if tree.mass.max() <= 0.0:
        raise ModelLoadError(
            "no link has mass, so the moving links cannot be given a regularising mass",
            file=description.source,
            element=f"<model name={description.name!r}>",
        )
    file_mass, file_inertia = tree.mass, inertia.copy()
    filled: dict[int, list[int]] = {}
    for b in massless:
        top = b
        while tree.parent[top] >= 0 and tree.parent[top] in massless:
            top = tree.parent[top]
        filled.setdefault(top, []).append(b)
    for top, bodies in filled.items():
        reference = _reference(tree, file_mass, top)
        added = _added_inertia(file_mass, file_inertia, reference)
        for b in bodies:
            mass[b] = REGULARISATION * file_mass[reference]
            com[b] = 0.0
            inertia[b] = inertia[b] + added * np.eye(3)
        joint = tree.joint_names[top] if tree.parent[top] >= 0 else None
        how = f"joint '{joint}'" if joint is not None else "the free base"
        names = ", ".join(f"'{tree.link_names[b]}'" for b in bodies)
        _report(
            description,
            tree.link_names[top],
            f"body '{tree.link_names[top]}' is moved by {how} but it and its subtree have zero mass; each of its "
            f"{len(bodies)} bodies ({names}) is given {REGULARISATION:g} of body '{tree.link_names[reference]}': "
            f"mass {mass[top]:.6g} kg at its link origin and {added:.6g} kg m^2 of inertia about each axis, "
            "to keep forward dynamics finite",
        )
    return mass, com, inertia


def _joint_space_inertia(tree: RigidTree, moving: np.ndarray, mass, com, inertia) -> tuple[np.ndarray, list[int]]:
    """The joint-space mass matrix ``(n, n)`` at zero position (numpy) and the body of each joint."""
    W_H = np.tile(np.eye(4), (tree.size, 1, 1))
    subtree = np.eye(tree.size, dtype=bool)
    for i in range(1, tree.size):
        W_H[i] = W_H[tree.parent[i]] @ tree.P_H_C[i]
    for i in range(tree.size - 1, 0, -1):
        subtree[tree.parent[i]] |= subtree[i]
    joints = [b for b in range(1, tree.size) if moving[b]]
    if not joints:
        return np.zeros((0, 0)), joints
    R = W_H[:, :3, :3]
    W_c = np.einsum("nij,nj->ni", R, com) + W_H[:, :3, 3]
    axes = np.einsum("nij,nj->ni", R[joints], tree.axis[joints])
    points = np.einsum("nij,nj->ni", R[joints], tree.axis_point[joints]) + W_H[joints, :3, 3]
    revolute = np.array([tree.joint_kind[b] in (REVOLUTE, BALL, SCREW) for b in joints])
    moves = subtree[joints].T  # (N, n): joint k moves body i
    advance = tree.pitch[joints][:, None] * axes  # a screw's translation per radian
    linear = np.where(revolute[None, :, None], np.cross(axes[None], W_c[:, None] - points[None]) + advance[None], axes[None])
    J_v = np.where(moves[..., None], linear, 0.0)  # (N, n, 3)
    J_w = np.where((moves & revolute[None])[..., None], axes[None], 0.0)
    W_I = R @ inertia @ np.swapaxes(R, 1, 2)
    n = len(joints)
    rows = np.concatenate([J_v * mass[:, None, None], J_w @ W_I], axis=2).transpose(1, 0, 2).reshape(n, -1)
    columns = np.concatenate([J_v, J_w], axis=2).transpose(1, 0, 2).reshape(n, -1)
    return rows @ columns.T, joints


def _singular_directions(tree: RigidTree, moving: np.ndarray, mass, com, inertia) -> list[list[int]]:
    """For each direction in which the joint-space mass matrix at zero position is singular, the
    bodies of the joints it involves."""
    M, joints = _joint_space_inertia(tree, moving, mass, com, inertia)
    if not joints:
        return []
    moments, vectors = np.linalg.eigh(M)
    singular = vectors[:, moments <= _MODEL_TOLERANCE * max(float(moments[-1]), 0.0)]
    return [[joints[k] for k in np.flatnonzero(np.abs(direction) > 1e-6)] for direction in singular.T]


def _fill_singular(tree: RigidTree, description: ModelDescription, moving: np.ndarray, mass, com, inertia):
    """Masses, COMs and inertias regularised where the mass matrix is singular at zero position
    (point masses turned about themselves; massless links of redundant joints); one warning each."""
    directions = _singular_directions(tree, moving, mass, com, inertia)
    if not directions:
        return mass, com, inertia
    file_mass, file_inertia = mass.copy(), inertia.copy()
    scale = float(np.abs(np.linalg.eigvalsh(inertia)).max(initial=0.0))
    done: set[int] = set()
    for involved in directions:
        names = ", ".join(f"'{tree.joint_names[j]}'" for j in involved)
        below = [i for i in range(1, tree.size) if any(_descends(tree, i, b) for b in involved)]
        points = [i for i in below if mass[i] > 0.0 and np.abs(np.linalg.eigvalsh(inertia[i])).max() <= _MODEL_TOLERANCE * scale]
        massless = [i for i in below if file_mass[i] <= 0.0]
        for b in [i for i in points or massless if i not in done]:
            done.add(b)
            if b in points:
                added = 0.4 * mass[b] * _POINT_RADIUS**2
                what = f"{added:.6g} kg m^2 of inertia about each axis (a solid sphere of its mass and radius {_POINT_RADIUS:g} m)"
            else:
                reference = _reference(tree, file_mass, b)
                added = _added_inertia(file_mass, file_inertia, reference)
                mass[b], com[b] = REGULARISATION * file_mass[reference], 0.0
                what = (
                    f"{REGULARISATION:g} of body '{tree.link_names[reference]}': mass {mass[b]:.6g} kg at its link origin "
                    f"and {added:.6g} kg m^2 of inertia about each axis"
                )
            inertia[b] = inertia[b] + added * np.eye(3)
            _report(
                description,
                tree.link_names[b],
                f"joints {names} can move body '{tree.link_names[b]}' without moving any inertia, so the mass matrix "
                f"would be singular; given {what}",
            )
    for involved in _singular_directions(tree, moving, mass, com, inertia):
        names = ", ".join(f"'{tree.joint_names[j]}'" for j in involved)
        _report(description, tree.link_names[involved[-1]], f"the mass matrix is singular along joints {names}: forward dynamics will not be finite")
    return mass, com, inertia


def _descends(tree: RigidTree, i: int, b: int) -> bool:
    """Whether body ``i`` is ``b`` or below it."""
    while i > b:
        i = tree.parent[i]
    return i == b


def _moving(tree: RigidTree, floating: bool) -> np.ndarray:
    return np.array([tree.joint_kind[i] != FIXED if tree.parent[i] >= 0 else floating for i in range(tree.size)])


def make_consistent(tree: RigidTree, description: ModelDescription, *, floating: bool) -> RigidTree:
    """``tree`` (fixed joints lumped) with every moving body physically consistent.

    Applies the rules of the module docstring, with one :class:`ModelLoadWarning` per changed
    body naming file, line and link; raises :class:`ModelLoadError` when nothing has mass.
    """
    moving = _moving(tree, floating)
    inertia = _fix_inertias(tree, description, moving)
    mass, com, inertia = _fill_massless(tree, description, moving, inertia)
    mass, com, inertia = _fill_singular(tree, description, moving, mass, com, inertia)
    return dataclasses.replace(tree, mass=mass, com=com, inertia=inertia)
