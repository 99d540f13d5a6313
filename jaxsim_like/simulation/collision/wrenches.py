"""From link velocities to contact velocities, and from contact forces back to link wrenches."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .collide import Contacts


def relative_velocity(contacts: Contacts, W_v: jax.Array) -> jax.Array:
    """Velocity ``(C, 3)`` [m/s] of a's material point minus b's at each contact position, from the
    inertial velocities ``W_v (L, 6)`` of all links (global numbering; ``[linear; angular]``, world
    axes, linear part the velocity of the material point at the frame origin of the positions)."""
    def at(link: jax.Array) -> jax.Array:
        return W_v[link, :3] + jnp.cross(W_v[link, 3:], contacts.position)

    return at(contacts.link_a) - at(contacts.link_b)


def link_wrenches(contacts: Contacts, forces: jax.Array, links: int) -> jax.Array:
    """Wrenches ``(links, 6)`` ``[force; torque]`` (world axes, torque about the frame origin of the
    positions) on all links of the forces ``(C, 3)`` on a at each contact position (b gets the opposite)."""
    forces = jnp.where(contacts.active[:, None], forces, 0.0)
    wrench = jnp.concatenate([forces, jnp.cross(contacts.position, forces)], axis=-1)
    total = jnp.zeros((links, 6), forces.dtype)
    return total.at[contacts.link_a].add(wrench).at[contacts.link_b].add(-wrench)
