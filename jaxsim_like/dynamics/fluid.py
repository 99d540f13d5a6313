"""Fluid forces by MuJoCo's inertia-box model (MJCF ``<option density viscosity wind>``).

Each body of mass ``m`` moves in the medium as the box of its equivalent inertia: with principal
moments ``I (3,)`` about its COM, the box's sides ``b_i = sqrt(6 max(I_j + I_k - I_i, 1e-15) /
m)`` [m] along the principal axes. With the body's angular velocity ``w`` and its COM's velocity
relative to the wind ``v`` in those axes, the medium of density ``rho`` [kg/m^3] and viscosity
``mu`` [Pa s] puts on it, at the COM, the force and torque (principal axes)

    f_i = -3 pi d mu v_i - rho/2 b_j b_k |v_i| v_i,
    t_i = -pi d^3 mu w_i - rho/64 b_i (b_j^4 + b_k^4) |w_i| w_i,

with ``d = (b_0 + b_1 + b_2) / 3`` and ``(i, j, k)`` the axes in turn: Stokes drag on the sphere
of the box's mean side, and quadratic drag on the faces of the box (MuJoCo's
``mj_inertiaBoxFluidModel``). The simulation step applies them as link wrenches at its start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.description import FluidDescription, ModelDescription
from ..parsers.errors import ModelLoadError
from ..pytree import pytree_dataclass
from . import spatial

MIN_MOMENT = 1e-15
"""[kg m^2]: the least ``I_j + I_k - I_i`` a side is taken from (MuJoCo's ``mjMINVAL``)."""


@pytree_dataclass(static=["links", "names"])
class FluidDrag:
    """The medium, ``density`` [kg/m^3], ``viscosity`` [Pa s] and ``wind (3,)`` [m/s] (world
    axes), and ``b`` bodies in it: the frame ``L_H_C (b, 4, 4)`` of each one's COM and principal
    axes in its link ``links[k]``, and its inertia box's sides ``box (b, 3)`` [m] (traced; see
    the module docstring). Static: the ``links (b,)`` and the bodies' ``names (b,)`` (links of
    the description, some lumped into their parents)."""

    density: jax.Array
    viscosity: jax.Array
    wind: jax.Array
    L_H_C: jax.Array
    box: jax.Array
    links: tuple[int, ...] = ()
    names: tuple[str, ...] = ()

    @staticmethod
    def none(dtype: Any) -> "FluidDrag":
        """No medium (arrays put on the device from NumPy, as :meth:`.JointCouplings.none`)."""
        return _drag(0.0, 0.0, np.zeros(3), [], dtype)

    @property
    def count(self) -> int:
        """The number of bodies ``b`` in the medium (static)."""
        return len(self.links)

    def placed(self, link_names: Sequence[str], frames: Sequence[tuple[str, int, np.ndarray]]) -> "FluidDrag":
        """These bodies on the links of a model with ``link_names`` and ``frames`` ``(name, link,
        L_H_F)`` (after lumping or reducing: a body is a link, or the frame of its name on the
        link it was lumped into; concrete values only)."""
        bodies = [(self.names[k], np.asarray(self.L_H_C[k]), np.asarray(self.box[k])) for k in range(self.count)]
        return _drag(self.density, self.viscosity, self.wind, bodies, self.L_H_C.dtype, link_names, frames)


def _drag(density, viscosity, wind, bodies, dtype, link_names: Sequence[str] = (), frames: Sequence = ()) -> FluidDrag:
    """The :class:`FluidDrag` of ``bodies`` ``(name, B_H_C, box)`` placed on ``link_names`` or
    ``frames`` (see :meth:`FluidDrag.placed`)."""
    frame_of = {name: (link, np.asarray(L_H_F, dtype=float)) for name, link, L_H_F in frames}
    links, poses = [], []
    for name, B_H_C, _ in bodies:
        link, L_H_B = (list(link_names).index(name), np.eye(4)) if name in link_names else frame_of[name]
        links.append(int(link))
        poses.append(L_H_B @ B_H_C)
    return FluidDrag(
        density=jnp.asarray(density, dtype=dtype),
        viscosity=jnp.asarray(viscosity, dtype=dtype),
        wind=jnp.asarray(np.asarray(wind, dtype=float), dtype=dtype),
        L_H_C=jnp.asarray(np.array(poses).reshape(-1, 4, 4), dtype=dtype),
        box=jnp.asarray(np.array([box for _, _, box in bodies], dtype=float).reshape(-1, 3), dtype=dtype),
        links=tuple(links),
        names=tuple(name for name, _, _ in bodies),
    )


def inertia_box(mass: float, moments: np.ndarray) -> np.ndarray:
    """``(3,)`` [m]: the sides of the box of a body's ``mass`` [kg] and principal ``moments (3,)``
    [kg m^2] (see the module docstring)."""
    I = np.asarray(moments, dtype=float)
    others = I.sum() - 2 * I  # I_j + I_k - I_i
    return np.sqrt(np.maximum(MIN_MOMENT, others) / mass * 6.0)


def build_fluid(
    description: ModelDescription, link_names: Sequence[str], frames: Sequence[tuple[str, int, np.ndarray]], dtype: Any
) -> FluidDrag:
    """The :class:`FluidDrag` of ``description.fluid`` (none without it) on a model of
    ``link_names`` and ``frames`` (see :meth:`FluidDrag.placed`). A body without mass is a
    :class:`ModelLoadError` at its link."""
    fluid: FluidDescription | None = description.fluid
    if fluid is None:
        return FluidDrag.none(dtype)
    bodies = []
    for name in fluid.bodies:
        link = description.link(name)
        if link.inertial is None or link.inertial.mass <= 0.0:
            where = link.location
            raise ModelLoadError(f"body '{name}' in the fluid has no mass", file=where.file, line=where.line, element=where.element)
        inertia = np.asarray(link.inertial.inertia, dtype=float)
        if np.count_nonzero(inertia - np.diag(np.diag(inertia))):
            moments, axes = np.linalg.eigh(inertia)
            axes[:, 2] *= np.sign(np.linalg.det(axes))  # a rotation
        else:
            moments, axes = np.diag(inertia), np.eye(3)
        I_H_C = np.eye(4)
        I_H_C[:3, :3] = axes
        bodies.append((name, link.inertial.L_H_I @ I_H_C, inertia_box(link.inertial.mass, moments)))
    return _drag(fluid.density, fluid.viscosity, fluid.wind, bodies, dtype, link_names, frames)


def fluid_wrenches(fluid: FluidDrag, number_of_links: int, G_H_L: jax.Array, G_v: jax.Array) -> jax.Array:
    """``G_f (N, 6)``: the medium's wrenches on the links (world axes, about ``G``'s origin) at
    the link poses ``G_H_L (N, 4, 4)`` and inertial velocities ``G_v (N, 6)`` (world axes, about
    ``G``'s origin)."""
    return fluid_forces(fluid, number_of_links, G_H_L, G_v)[0]


def fluid_forces(fluid: FluidDrag, number_of_links: int, G_H_L: jax.Array, G_v: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The medium's wrenches ``G_f (N, 6)`` on the links (as :func:`fluid_wrenches`) and their
    damping ``G_D = -dG_f/dG_v (N, 6, 6)`` (world axes, about ``G``'s origin; symmetric, positive
    semidefinite), which the implicit step takes at the end of the step. Each body's is
    ``X^T diag(c) X`` with ``X`` the map from ``G_v`` to its COM's velocity in its principal axes
    and ``c (6,)`` the slopes of its forces (each a function of its own velocity component)."""
    dtype = G_H_L.dtype
    if not fluid.count:
        return jnp.zeros((number_of_links, 6), dtype), jnp.zeros((number_of_links, 6, 6), dtype)
    links = np.asarray(fluid.links, dtype=int)
    G_H_C = jnp.matmul(G_H_L[links], fluid.L_H_C.astype(dtype))
    C_X_G = spatial.motion_transform(spatial.inverse_transform(G_H_C))  # G_v -> [COM velocity; omega], principal axes
    wind = jnp.concatenate([spatial.rotate(jnp.swapaxes(G_H_C[:, :3, :3], -1, -2), fluid.wind.astype(dtype)), jnp.zeros((len(links), 3), dtype)], axis=-1)
    local = spatial.matvec(C_X_G, G_v[links], fused=False) - wind
    velocity, omega = local[:, :3], local[:, 3:]
    box = fluid.box.astype(dtype)
    density, viscosity = fluid.density.astype(dtype), fluid.viscosity.astype(dtype)
    diameter = jnp.mean(box, axis=-1, keepdims=True)
    rolled1, rolled2 = jnp.roll(box, -1, axis=-1), jnp.roll(box, -2, axis=-1)  # b_j, b_k of each axis i
    linear_stokes, linear_faces = 3 * jnp.pi * diameter * viscosity, 0.5 * density * rolled1 * rolled2
    angular_stokes, angular_faces = jnp.pi * diameter**3 * viscosity, density * box * (rolled1**4 + rolled2**4) / 64
    force = -(linear_stokes + linear_faces * jnp.abs(velocity)) * velocity
    torque = -(angular_stokes + angular_faces * jnp.abs(omega)) * omega
    slopes = jnp.concatenate(
        [linear_stokes + 2 * linear_faces * jnp.abs(velocity), angular_stokes + 2 * angular_faces * jnp.abs(omega)], axis=-1
    )
    G_Xf_C = jnp.swapaxes(C_X_G, -1, -2)  # C's wrenches [force; torque] to G's
    wrenches = spatial.matvec(G_Xf_C, jnp.concatenate([force, torque], axis=-1), fused=False)
    damping = jnp.matmul(G_Xf_C * slopes[:, None, :], C_X_G)
    G_f = jnp.zeros((number_of_links, 6), dtype).at[links].add(wrenches)
    return G_f, jnp.zeros((number_of_links, 6, 6), dtype).at[links].add(damping)
