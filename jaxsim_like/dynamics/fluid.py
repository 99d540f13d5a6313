"""Fluid forces by MuJoCo's inertia-box and ellipsoid models (MJCF ``<option density viscosity
wind>``; the ellipsoid model on the geoms of ``fluidshape="ellipsoid"``, see :mod:`.fluid_ellipsoid`,
the inertia box on the other bodies).

Each body of mass ``m`` moves in the medium as the box of its equivalent inertia: with principal
moments ``I (3,)`` about its COM, the box's sides ``b_i = sqrt(6 max(I_j + I_k - I_i, 1e-15) /
m)`` [m] along the principal axes. With the body's angular velocity ``w`` and its COM's velocity
relative to the wind ``v`` in those axes, the medium of density ``rho`` [kg/m^3] and viscosity
``mu`` [Pa s] puts on it, at the COM, the force and torque (principal axes)

    f_i = -3 pi d mu v_i - rho/2 b_j b_k |v_i| v_i,
    t_i = -pi d^3 mu w_i - rho/64 b_i (b_j^4 + b_k^4) |w_i| w_i,

with ``d = (b_0 + b_1 + b_2) / 3`` and ``(i, j, k)`` the axes in turn: Stokes drag on the sphere
of the box's mean side, and quadratic drag on the faces of the box (MuJoCo's
``mj_inertiaBoxFluidModel``). The simulation step applies them as link wrenches at its start;
the implicit step takes the drag at its end, linearised (:func:`fluid_forces`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.description import FluidDescription, ModelDescription
from ..parsers.errors import ModelLoadError
from ..pytree import pytree_dataclass
from . import spatial
from .fluid_ellipsoid import ellipsoid_forces

MIN_MOMENT = 1e-15
"""[kg m^2]: the least ``I_j + I_k - I_i`` a side is taken from (MuJoCo's ``mjMINVAL``)."""


@pytree_dataclass(static=["links", "names", "geom_links", "geom_bodies", "geom_names"])
class FluidDrag:
    """The medium, ``density`` [kg/m^3], ``viscosity`` [Pa s] and ``wind (3,)`` [m/s] (world
    axes); ``b`` bodies in it by their inertia boxes: the frame ``L_H_C (b, 4, 4)`` of each one's
    COM and principal axes in its link ``links[k]``, and its box's sides ``box (b, 3)`` [m] (see
    the module docstring); and ``e`` geoms by their ellipsoids: the frame ``L_H_E (e, 4, 4)`` of
    each on its link ``geom_links[k]``, its ``semiaxes (e, 3)`` [m], ``coefficients (e, 5)``,
    ``interaction (e,)``, ``virtual_mass (e, 3)`` [m^3] and ``virtual_inertia (e, 3)`` [m^5]
    (see :mod:`.fluid_ellipsoid`). Arrays traced; static: the ``links (b,)``, ``geom_links
    (e,)``, the bodies' ``names (b,)`` and the geoms' ``geom_bodies (e,)`` (links of the
    description, some lumped into their parents) and ``geom_names (e,)``."""

    density: jax.Array
    viscosity: jax.Array
    wind: jax.Array
    L_H_C: jax.Array
    box: jax.Array
    L_H_E: jax.Array
    semiaxes: jax.Array
    coefficients: jax.Array
    interaction: jax.Array
    virtual_mass: jax.Array
    virtual_inertia: jax.Array
    links: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    geom_links: tuple[int, ...] = ()
    geom_bodies: tuple[str, ...] = ()
    geom_names: tuple[str, ...] = ()

    @staticmethod
    def none(dtype: Any) -> "FluidDrag":
        """No medium (arrays put on the device from NumPy, as :meth:`.JointCouplings.none`)."""
        return _drag(0.0, 0.0, np.zeros(3), [], [], dtype)

    @property
    def count(self) -> int:
        """The number of bodies ``b`` in the medium by their inertia boxes (static)."""
        return len(self.links)

    @property
    def geom_count(self) -> int:
        """The number of geoms ``e`` in the medium by their ellipsoids (static)."""
        return len(self.geom_links)

    def placed(self, link_names: Sequence[str], frames: Sequence[tuple[str, int, np.ndarray]]) -> "FluidDrag":
        """These bodies and geoms on the links of a model with ``link_names`` and ``frames``
        ``(name, link, L_H_F)`` (after lumping or reducing: a body is a link, or the frame of its
        name on the link it was lumped into; concrete values only)."""
        bodies = [(self.names[k], np.asarray(self.L_H_C[k]), np.asarray(self.box[k])) for k in range(self.count)]
        fields = ("semiaxes", "coefficients", "interaction", "virtual_mass", "virtual_inertia")
        geoms = [
            _Ellipsoid(self.geom_names[k], self.geom_bodies[k], np.asarray(self.L_H_E[k]), *(np.asarray(getattr(self, f)[k]) for f in fields))
            for k in range(self.geom_count)
        ]
        return _drag(self.density, self.viscosity, self.wind, bodies, geoms, self.L_H_C.dtype, link_names, frames)

    def renamed(self, link_names: Sequence[str]) -> "FluidDrag":
        """These bodies and geoms named after the links they are on, of a model with
        ``link_names`` (before :meth:`placed` on a reduced model)."""
        return self.replace(
            names=tuple(link_names[link] for link in self.links), geom_bodies=tuple(link_names[link] for link in self.geom_links)
        )


class _Ellipsoid(NamedTuple):
    """A geom of the ellipsoid model on ``body``, at ``B_H_E`` (see :class:`FluidDrag`)."""

    name: str
    body: str
    B_H_E: np.ndarray
    semiaxes: np.ndarray
    coefficients: np.ndarray
    interaction: Any
    virtual_mass: np.ndarray
    virtual_inertia: np.ndarray


def _drag(density, viscosity, wind, bodies, geoms, dtype, link_names: Sequence[str] = (), frames: Sequence = ()) -> FluidDrag:
    """The :class:`FluidDrag` of ``bodies`` ``(name, B_H_C, box)`` and ``geoms`` (:class:`_Ellipsoid`)
    placed on ``link_names`` or ``frames`` (see :meth:`FluidDrag.placed`)."""
    frame_of = {name: (link, np.asarray(L_H_F, dtype=float)) for name, link, L_H_F in frames}

    def place(name: str, B_H_X: np.ndarray) -> tuple[int, np.ndarray]:
        link, L_H_B = (list(link_names).index(name), np.eye(4)) if name in link_names else frame_of[name]
        return int(link), L_H_B @ B_H_X

    def array(values, *shape) -> jax.Array:
        return jnp.asarray(np.array(values, dtype=float).reshape(-1, *shape), dtype=dtype)

    placed_bodies = [place(name, B_H_C) for name, B_H_C, _ in bodies]
    placed_geoms = [place(geom.body, geom.B_H_E) for geom in geoms]
    return FluidDrag(
        density=jnp.asarray(density, dtype=dtype),
        viscosity=jnp.asarray(viscosity, dtype=dtype),
        wind=jnp.asarray(np.asarray(wind, dtype=float), dtype=dtype),
        L_H_C=array([pose for _, pose in placed_bodies], 4, 4),
        box=array([box for _, _, box in bodies], 3),
        L_H_E=array([pose for _, pose in placed_geoms], 4, 4),
        semiaxes=array([geom.semiaxes for geom in geoms], 3),
        coefficients=array([geom.coefficients for geom in geoms], 5),
        interaction=array([geom.interaction for geom in geoms]).reshape(-1),
        virtual_mass=array([geom.virtual_mass for geom in geoms], 3),
        virtual_inertia=array([geom.virtual_inertia for geom in geoms], 3),
        links=tuple(link for link, _ in placed_bodies),
        names=tuple(name for name, _, _ in bodies),
        geom_links=tuple(link for link, _ in placed_geoms),
        geom_bodies=tuple(geom.body for geom in geoms),
        geom_names=tuple(geom.name for geom in geoms),
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
    geoms = [
        _Ellipsoid(g.name, g.body, g.B_H_G, g.semiaxes, g.coefficients, g.interaction, g.virtual_mass, g.virtual_inertia)
        for g in fluid.geoms
    ]
    return _drag(fluid.density, fluid.viscosity, fluid.wind, bodies, geoms, dtype, link_names, frames)


def fluid_wrenches(fluid: FluidDrag, number_of_links: int, G_H_L: jax.Array, G_v: jax.Array) -> jax.Array:
    """``G_f (N, 6)``: the medium's wrenches on the links (world axes, about ``G``'s origin) at
    the link poses ``G_H_L (N, 4, 4)`` and inertial velocities ``G_v (N, 6)`` (world axes, about
    ``G``'s origin)."""
    return fluid_forces(fluid, number_of_links, G_H_L, G_v)[0]


def fluid_forces(fluid: FluidDrag, number_of_links: int, G_H_L: jax.Array, G_v: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The medium's wrenches ``G_f (N, 6)`` on the links (as :func:`fluid_wrenches`) and their
    drag's damping ``G_D (N, 6, 6)`` (world axes, about ``G``'s origin; symmetric, positive
    semidefinite), which the implicit step takes at the end of the step as ``G_f - G_D dv``.
    A body's inertia box gives ``X^T diag(c) X``, ``X`` the map from ``G_v`` to its COM's velocity
    in its principal axes and ``c (6,)`` the slopes of its forces (each a function of its own
    velocity component): ``G_D = -dG_f/dG_v``, as MuJoCo's ``implicitfast``. A geom's ellipsoid
    gives its drags' secant slopes the same way (its lifts and added-mass terms stay explicit)."""
    dtype = G_H_L.dtype
    G_f = jnp.zeros((number_of_links, 6), dtype)
    G_D = jnp.zeros((number_of_links, 6, 6), dtype)
    if fluid.count:
        links = np.asarray(fluid.links, dtype=int)
        C_X_G, local = _local_velocities(fluid, G_H_L[links], fluid.L_H_C.astype(dtype), G_v[links])
        wrenches, slopes = _box_forces(fluid, local)
        G_f, G_D = _add_on_links(G_f, G_D, links, C_X_G, wrenches, slopes)
    if fluid.geom_count:
        links = np.asarray(fluid.geom_links, dtype=int)
        E_X_G, local = _local_velocities(fluid, G_H_L[links], fluid.L_H_E.astype(dtype), G_v[links])
        wrenches, slopes = ellipsoid_forces(
            local, *(getattr(fluid, f).astype(dtype) for f in ("semiaxes", "coefficients", "interaction", "virtual_mass", "virtual_inertia")),
            fluid.density.astype(dtype), fluid.viscosity.astype(dtype),
        )
        G_f, G_D = _add_on_links(G_f, G_D, links, E_X_G, wrenches, slopes)
    return G_f, G_D


def _local_velocities(fluid: FluidDrag, G_H_L: jax.Array, L_H_F: jax.Array, G_v: jax.Array) -> tuple[jax.Array, jax.Array]:
    """For frames ``L_H_F (k, 4, 4)`` on links at ``G_H_L (k, 4, 4)`` moving at ``G_v (k, 6)``:
    the maps ``F_X_G (k, 6, 6)`` from ``G_v`` to each frame's ``[velocity of its origin; angular
    velocity]`` in its axes, and those velocities relative to the wind ``(k, 6)``."""
    G_H_F = jnp.matmul(G_H_L, L_H_F)
    F_X_G = spatial.motion_transform(spatial.inverse_transform(G_H_F))
    R_T = jnp.swapaxes(G_H_F[:, :3, :3], -1, -2)
    wind = spatial.rotate(R_T, jnp.broadcast_to(fluid.wind.astype(G_v.dtype), G_v[:, :3].shape))
    return F_X_G, spatial.matvec(F_X_G, G_v, fused=False) - jnp.concatenate([wind, jnp.zeros_like(wind)], axis=-1)


def _box_forces(fluid: FluidDrag, local: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The inertia boxes' wrenches ``[force; torque] (b, 6)`` at their COMs in their principal
    axes at their ``local`` velocities ``(b, 6)`` (see the module docstring), and their slopes
    ``(b, 6)``, the derivatives of each component by its velocity's."""
    dtype = local.dtype
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
    return jnp.concatenate([force, torque], axis=-1), slopes


def _add_on_links(
    G_f: jax.Array, G_D: jax.Array, links: np.ndarray, F_X_G: jax.Array, wrenches: jax.Array, slopes: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """``G_f (N, 6)`` and ``G_D (N, 6, 6)`` plus, on ``links (k,)``, the ``wrenches (k, 6)`` and
    the dampings ``diag(slopes (k, 6))`` of frames of velocity maps ``F_X_G (k, 6, 6)``, both in
    the frames' axes, about their origins, moved to ``G``'s."""
    G_Xf_F = jnp.swapaxes(F_X_G, -1, -2)  # the frames' wrenches [force; torque] to G's
    G_f = G_f.at[links].add(spatial.matvec(G_Xf_F, wrenches, fused=False))
    return G_f, G_D.at[links].add(jnp.matmul(G_Xf_F * slopes[:, None, :], F_X_G))
