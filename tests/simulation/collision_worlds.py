"""Small models for the collision tests: one free link carrying one collision shape each."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxsim_like as js
from jaxsim_like.simulation.world import WorldModel, world_rollout

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



def rest_on_pairs(world: WorldModel, state, steps: int, kept: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A world of pairs (model ``2 k`` a base, ``2 k + 1`` the body on it) rolled out ``steps``
    from ``state``: per top body, the normal force on it from the links it touches over the last
    ``kept`` steps ``(kept, K)`` [N], its deepest touching contact at the end ``(K,)`` [m] and its
    touching contacts at the end ``(K,)``."""
    top = jnp.arange(1, len(world.models), 2)

    def forces(pairs):
        contacts = pairs.contacts
        on_top = (contacts.link_a[None] == top[:, None]) & contacts.active[None]
        under_top = (contacts.link_b[None] == top[:, None]) & contacts.active[None]
        normal = jnp.sum(jnp.where(on_top, pairs.forces[None, :, 2], 0.0) - jnp.where(under_top, pairs.forces[None, :, 2], 0.0), axis=1)
        touching = on_top | under_top
        return normal, jnp.max(jnp.where(touching, contacts.depth[None], 0.0), axis=1), jnp.sum(touching, axis=1)

    # Hundreds of steps of tens of bodies: at the suite's XLA level 0 the run costs twice the
    # compilation; level 1 compiles a little longer and runs three times faster.
    @functools.partial(jax.jit, compiler_options={"xla_backend_optimization_level": 1})
    def run(state):
        _, outputs = world_rollout(world, state, None, steps=steps)
        normal, depth, count = jax.vmap(forces)(outputs.pairs)
        return normal[-kept:], depth[-1], count[-1]

    normal, depth, count = run(state)
    return np.asarray(normal), np.asarray(depth), np.asarray(count)
