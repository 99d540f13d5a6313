"""Small models for the collision tests: one free link carrying one collision shape each."""

from __future__ import annotations

import numpy as np

import jaxsim_like as js

GEOMETRY = {
    "ball": '<sphere radius="0.1"/>',
    "cube": '<box size="0.2 0.2 0.2"/>',
    "slab": '<box size="0.6 0.4 0.1"/>',
    "rod": '<capsule radius="0.05" length="0.4"/>',
    "can": '<cylinder radius="0.1" length="0.3"/>',
}


def body_urdf(name: str, geometry: str | None = None) -> str:
    """A free 1 kg link named ``name`` with the collision ``GEOMETRY[name]`` (or ``geometry``) at its origin."""
    return f"""<robot name="{name}"><link name="{name}_link"><inertial><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision><geometry>{geometry or GEOMETRY[name]}</geometry></collision></link></robot>"""


def body(name: str) -> js.Model:
    return js.load_model(body_urdf(name))


def solid(name: str, geometry: str, mass: float, inertia: float, *, fixed: bool = False) -> js.Model:
    """A one-link model ``name`` of ``mass`` [kg] and isotropic ``inertia`` [kg m^2] with the
    collision ``geometry`` at its origin (welded to the world with ``fixed``)."""
    return js.load_model(
        f"""<robot name="{name}"><link name="link"><inertial><mass value="{mass}"/>
        <inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry>{geometry}</geometry></collision></link></robot>""",
        floating_base=not fixed,
    )


def cube(name: str, mass: float = 5.0, side: float = 0.2) -> js.Model:
    """A free solid cube of ``side`` [m] and ``mass`` [kg]."""
    return solid(name, f'<box size="{side} {side} {side}"/>', mass, mass * side**2 / 6)


def pose(position=(0.0, 0.0, 0.0), rotation=np.eye(3)) -> np.ndarray:
    """``(1, 4, 4)``: the link poses of a one-link model."""
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = rotation, position
    return H[None]


def rotation(axis: str, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R

