"""MuJoCo's ellipsoid fluid model (MJCF ``fluidshape="ellipsoid"`` and ``fluidcoef`` on geoms).

A geom moves in the medium as the ellipsoid of semi-axes ``s (3,)`` [m] about its centre and
along its axes. With its velocity ``v`` relative to the wind and angular velocity ``w`` in those
axes, the medium of density ``rho`` and viscosity ``mu`` puts on it, at its centre, the sum of
(MuJoCo's ``mj_ellipsoidFluidModel``, each force scaled by the geom's ``interaction``):

- added mass, the velocity terms only (the acceleration terms would change the mass matrix;
  MuJoCo leaves them out too): with the virtual momenta ``p = rho m_A o v`` and ``L = rho I_A o
  w``, the force ``p x w`` and the torque ``p x v + L x w``;
- Magnus lift ``C_M rho V (w x v)``, ``V`` the ellipsoid's volume;
- Kutta lift ``C_K rho A_p |v|^2 (n . u) / |n|^2 ((n x u) x u)``, with ``u = v / |v|``, ``n =
  ((s1 s2)^2 u0, (s2 s0)^2 u1, (s0 s1)^2 u2)`` the normal of the ellipsoid's section seen along
  ``u`` and ``A_p = pi sqrt(|n|^2 / (n . u))`` that section's area (MuJoCo 3.17's forces at every
  speed: no floor on the denominators);
- drag ``-(mu 3 pi D + rho |v| (C_b A_p + C_s (A_max - A_p))) v``, Stokes on the sphere of
  diameter ``D = 2 (s0 + s1 + s2) / 3`` plus blunt and slender quadratic drag (``A_max = pi
  d_max d_mid``, the largest section);
- angular drag ``-(mu pi D^3 + rho |m|) w`` with ``m_i = w_i (C_a I_i + C_s (I_max - I_i))``,
  ``I_i = 8/15 pi s_i max(s_j, s_k)^4`` and ``I_max = 8/15 pi d_mid d_max^4``,

where ``(C_b, C_s, C_a, C_K, C_M)`` are ``fluidcoef`` and ``m_A``, ``I_A`` the virtual mass and
inertia MuJoCo's compiler derives from the semi-axes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import spatial

def _section(semiaxes: jax.Array, v: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
    """Seen along ``v (g, 3)``: the speed ``|v| (g,)``, the direction ``u (g, 3)`` (``e_x`` at
    rest), the area ``A_p (g,)`` [m^2] of the ellipsoid's section, the ratio ``(n . u) / |n|^2
    (g,)`` of its normal ``n (g, 3)`` (not unit; see the module docstring) to ``u``, and ``n``, all
    functions of the direction alone, so finite (with their gradients) at rest."""
    speed = spatial.safe_norm(v)
    moving = speed > 0
    u = jnp.where(moving[:, None], v / jnp.where(moving, speed, 1.0)[:, None], jnp.eye(3, dtype=v.dtype)[0])
    s0, s1, s2 = semiaxes[:, 0], semiaxes[:, 1], semiaxes[:, 2]
    pairs = jnp.stack([s1 * s2, s2 * s0, s0 * s1], axis=-1)  # (g, 3)
    normal = pairs**2 * u
    squared_normal, along = spatial.dot(normal, normal), spatial.dot(normal, u)
    return speed, u, jnp.pi * jnp.sqrt(squared_normal / along), along / squared_normal, normal


def ellipsoid_forces(
    local_velocity: jax.Array,
    semiaxes: jax.Array,
    coefficients: jax.Array,
    interaction: jax.Array,
    virtual_mass: jax.Array,
    virtual_inertia: jax.Array,
    density: jax.Array,
    viscosity: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """The wrenches ``[force; torque] (g, 6)`` [N, N m] on ``g`` ellipsoids at their centres, in
    their axes, at their ``local_velocity [v; w] (g, 6)`` (relative to the wind, their axes), of
    ``semiaxes (g, 3)``, ``coefficients (g, 5)`` (``fluidcoef``), ``interaction (g,)``,
    ``virtual_mass (g, 3)`` and ``virtual_inertia (g, 3)``; and the drags' secant slopes ``(g,
    6)`` (the linear and the angular drag's coefficient, thrice each, times the interaction):
    with them frozen, ``-slopes o [v; w]`` is the drag, which an implicit step takes at its end."""
    v, w = local_velocity[:, :3], local_velocity[:, 3:]
    blunt, slender, angular, kutta, magnus = (coefficients[:, k] for k in range(5))
    s = semiaxes
    largest, smallest = jnp.max(s, axis=-1), jnp.min(s, axis=-1)
    middle = jnp.sum(s, axis=-1) - largest - smallest
    volume = 4.0 / 3.0 * jnp.pi * s[:, 0] * s[:, 1] * s[:, 2]
    largest_section = jnp.pi * largest * middle

    linear_momentum, angular_momentum = density * virtual_mass * v, density * virtual_inertia * w
    added_force = jnp.cross(linear_momentum, w)
    added_torque = jnp.cross(linear_momentum, v) + jnp.cross(angular_momentum, w)

    magnus_force = (magnus * density * volume)[:, None] * jnp.cross(w, v)
    speed, u, area, alignment, normal = _section(s, v)
    kutta_force = (kutta * density * alignment * area * speed**2)[:, None] * jnp.cross(jnp.cross(normal, u), u)

    diameter = 2.0 / 3.0 * jnp.sum(s, axis=-1)
    moments = 8.0 / 15.0 * jnp.pi * s * jnp.maximum(jnp.roll(s, -1, axis=-1), jnp.roll(s, -2, axis=-1)) ** 4
    largest_moment = 8.0 / 15.0 * jnp.pi * middle * largest**4
    swirl = w * (angular[:, None] * moments + slender[:, None] * (largest_moment[:, None] - moments))
    linear_drag = viscosity * 3.0 * jnp.pi * diameter + density * speed * (
        area * blunt + slender * (largest_section - area)
    )
    angular_drag = viscosity * jnp.pi * diameter**3 + density * spatial.safe_norm(swirl)

    force = added_force + magnus_force + kutta_force - linear_drag[:, None] * v
    torque = added_torque - angular_drag[:, None] * w
    slopes = jnp.stack([linear_drag] * 3 + [angular_drag] * 3, axis=-1)
    return interaction[:, None] * jnp.concatenate([force, torque], axis=-1), interaction[:, None] * slopes
