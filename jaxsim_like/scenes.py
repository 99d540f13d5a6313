"""Scene builders: free bodies of one primitive shape, and static geometry as terrain.

Each body is a one-link model with a floating base, of uniform density (its inertia about its
centre of mass, which is its link origin), whose collision and visual shapes are the primitive::

    cube = scenes.box((0.1, 0.1, 0.1), mass=0.5)
    ball = scenes.sphere(0.05, mass=0.2)
    terrain = scenes.bin(half_width=0.3, height=0.2)               # the ground and four walls
    terrain = scenes.table(height=0.75, terrain=terrain)           # a table beside it

Shapes follow URDF: a box is given by its full ``size`` (x, y, z) [m]; a cylinder and a capsule
lie along their link's z axis, ``length`` [m] being the cylinder's (a capsule's straight part).
Static geometry is terrain (:class:`~jaxsim_like.simulation.terrain.Terrain` boxes): every model
touches it; in a world (:meth:`~jaxsim_like.simulation.world.WorldModel.build`) the boxes are the
world's last model, welded, met by the bodies' shapes (:mod:`~jaxsim_like.simulation.scenery`)
in pair groups of their own, taking none of the bodies' pair budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .dynamics.model import Model
from .loading import load_model
from .simulation.terrain import Terrain


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return value


def _vector(name: str, values: Sequence[float], size: int, positive: bool) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.shape != (size,) or not np.isfinite(array).all() or (positive and not (array > 0).all()):
        kind = "positive " if positive else ""
        raise ValueError(f"{name} must be {size} finite {kind}numbers, got {array.tolist()}")
    return array


def _body(name: str, geometry: str, mass: float, inertia: np.ndarray) -> Model:
    """A free one-link model ``name`` of ``mass`` [kg], principal ``inertia (3,)`` [kg m^2] about its origin."""
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"name must be a non-empty identifier (letters, digits, underscores), got {name!r}")
    ixx, iyy, izz = (float(x) for x in inertia)
    urdf = f"""<robot name="{name}"><link name="{name}">
      <inertial><mass value="{mass!r}"/><inertia ixx="{ixx!r}" iyy="{iyy!r}" izz="{izz!r}" ixy="0" ixz="0" iyz="0"/></inertial>
      <visual><geometry>{geometry}</geometry></visual><collision><geometry>{geometry}</geometry></collision>
    </link></robot>"""
    return load_model(urdf, floating_base=True)


def box(size: Sequence[float] = (0.1, 0.1, 0.1), *, mass: float = 1.0, name: str = "box") -> Model:
    """A free box of full ``size (3,)`` [m] and ``mass`` [kg]."""
    x, y, z = (float(v) for v in _vector("size", size, 3, positive=True))
    mass = _positive("mass", mass)
    inertia = mass / 12 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])
    return _body(name, f'<box size="{x!r} {y!r} {z!r}"/>', mass, inertia)


def sphere(radius: float = 0.05, *, mass: float = 1.0, name: str = "sphere") -> Model:
    """A free sphere of ``radius`` [m] and ``mass`` [kg]."""
    r, mass = _positive("radius", radius), _positive("mass", mass)
    return _body(name, f'<sphere radius="{r!r}"/>', mass, np.full(3, 0.4 * mass * r * r))


def cylinder(radius: float = 0.05, length: float = 0.1, *, mass: float = 1.0, name: str = "cylinder") -> Model:
    """A free cylinder of ``radius`` and ``length`` [m] along z, and ``mass`` [kg]."""
    r, h, mass = _positive("radius", radius), _positive("length", length), _positive("mass", mass)
    across = mass * (3 * r * r + h * h) / 12
    return _body(name, f'<cylinder radius="{r!r}" length="{h!r}"/>', mass, np.array([across, across, 0.5 * mass * r * r]))


def capsule(radius: float = 0.03, length: float = 0.1, *, mass: float = 1.0, name: str = "capsule") -> Model:
    """A free capsule (a cylinder of ``radius`` and ``length`` [m] along z capped by two
    hemispheres) of ``mass`` [kg]."""
    r, h, mass = _positive("radius", radius), _positive("length", length), _positive("mass", mass)
    cylinder_volume, sphere_volume = math.pi * r * r * h, 4 / 3 * math.pi * r**3
    shaft = mass * cylinder_volume / (cylinder_volume + sphere_volume)
    caps = mass - shaft
    # Each hemisphere's centre of mass is 3r/8 from its flat face, which is h/2 from the middle.
    across = shaft * (3 * r * r + h * h) / 12 + caps * (0.4 * r * r + h * h / 4 + 3 * h * r / 8)
    along = 0.5 * shaft * r * r + 0.4 * caps * r * r
    return _body(name, f'<capsule radius="{r!r}" length="{h!r}"/>', mass, np.array([across, across, along]))


def _slab(centre: Sequence[float], half_extents: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    W_H_box = np.eye(4)
    W_H_box[:3, 3] = centre
    return W_H_box, np.asarray(half_extents, dtype=float)


def _with_slabs(terrain: Terrain | None, slabs: list[tuple[np.ndarray, np.ndarray]]) -> Terrain:
    base = Terrain.plane() if terrain is None else terrain
    return base.with_boxes(np.stack([s[0] for s in slabs]), np.stack([s[1] for s in slabs]))


def table(
    *,
    height: float = 0.75,
    top: Sequence[float] = (0.8, 0.6),
    thickness: float = 0.04,
    leg: float = 0.05,
    centre: Sequence[float] = (0.0, 0.0),
    terrain: Terrain | None = None,
) -> Terrain:
    """``terrain`` (default: the plane z = 0) with a table: a ``top (2,)`` [m] (x and y) slab of
    ``thickness`` [m] whose upper face is at ``height`` [m], on four square legs of side ``leg``
    [m] at its corners, centred at ``centre (2,)`` (x, y) [m]."""
    height, thickness, leg = _positive("height", height), _positive("thickness", thickness), _positive("leg", leg)
    (x, y), (cx, cy) = _vector("top", top, 2, positive=True), _vector("centre", centre, 2, positive=False)
    if thickness >= height or leg > min(x, y) / 2:
        raise ValueError(f"the table's thickness ({thickness}) must be below its height ({height}) and its legs ({leg}) at most half its top ({x}, {y})")
    slabs = [_slab((cx, cy, height - thickness / 2), (x / 2, y / 2, thickness / 2))]
    leg_height = height - thickness
    for sx in (-1, 1):
        for sy in (-1, 1):
            slabs.append(_slab((cx + sx * (x - leg) / 2, cy + sy * (y - leg) / 2, leg_height / 2), (leg / 2, leg / 2, leg_height / 2)))
    return _with_slabs(terrain, slabs)


def bin(
    *,
    half_width: float | Sequence[float] = 0.2,
    height: float = 0.3,
    thickness: float = 0.02,
    centre: Sequence[float] = (0.0, 0.0),
    terrain: Terrain | None = None,
) -> Terrain:
    """``terrain`` (default: the plane z = 0, the bin's floor) with four walls of ``height`` and
    ``thickness`` [m] around the inner ``half_width`` [m] (one number, or x and y), centred at
    ``centre (2,)`` (x, y) [m]."""
    height, thickness = _positive("height", height), _positive("thickness", thickness)
    widths = np.asarray(half_width, dtype=float)
    hx, hy = _vector("half_width", np.full(2, widths) if widths.ndim == 0 else widths, 2, positive=True)
    cx, cy = _vector("centre", centre, 2, positive=False)
    t, z = thickness / 2, height / 2
    slabs = [
        _slab((cx + hx + t, cy, z), (t, hy + thickness, z)),
        _slab((cx - hx - t, cy, z), (t, hy + thickness, z)),
        _slab((cx, cy + hy + t, z), (hx, t, z)),
        _slab((cx, cy - hy - t, z), (hx, t, z)),
    ]
    return _with_slabs(terrain, slabs)
