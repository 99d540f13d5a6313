"""Domain randomisation: ranges of model and world parameters, sampled per episode from a key.

The ranges and the samples are arrays (traced), so changing a range or drawing a new sample
never recompiles; a range whose low and high agree draws the nominal value. The samples act on
every model of the world: link masses and inertias scaled together (``mass_scale`` per link),
the friction coefficient of each model's contacts (its law's, its points' own where the file
gives them: ``Model.point_friction``, and the friction of the collision table's pairs on its
links: a pair between two models takes the larger of their two factors), and the height [m] of
a plane terrain (moved along z; boxes and height functions stay where they are).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..pytree import pytree_dataclass
from ..simulation.world import WorldModel


class Sample(NamedTuple):
    """One draw: ``mass_scale`` (per model, ``(N_m,)``), ``friction`` (per model, scalar) and
    the ``terrain_height`` [m] (scalar)."""

    mass_scale: tuple[jax.Array, ...]
    friction: tuple[jax.Array, ...]
    terrain_height: jax.Array


@pytree_dataclass()
class Randomisation:
    """Uniform ranges ``(2,)`` = ``(low, high)``: ``mass_scale`` (a factor, drawn per link),
    ``friction`` (a factor on each model's nominal friction) and ``terrain_height`` [m]."""

    mass_scale: jax.Array
    friction: jax.Array
    terrain_height: jax.Array

    @staticmethod
    def build(mass_scale: Any = (1.0, 1.0), friction: Any = (1.0, 1.0), terrain_height: Any = (0.0, 0.0)) -> "Randomisation":
        """Ranges ``(low, high)``; the defaults draw the nominal world."""
        ranges = {}
        for name, value in (("mass_scale", mass_scale), ("friction", friction), ("terrain_height", terrain_height)):
            array = jnp.asarray(value, dtype=float)
            if array.shape != (2,):
                raise ValueError(f"{name} must be a (low, high) pair, got {value!r}")
            ranges[name] = array
        return Randomisation(**ranges)

    def sample(self, world: WorldModel, key: jax.Array) -> Sample:
        """A :class:`Sample` for ``world`` drawn from ``key`` (one draw of uniform numbers: each
        draw adds a threefry block to the compiled graph, slow to compile under ``vmap``)."""
        links = [m.number_of_links for m in world.models]
        count = len(links)
        dtype = self.mass_scale.dtype
        u = jax.random.uniform(key, (sum(links) + count + 1,), dtype)

        def scaled(values, bounds):
            return bounds[0] + (bounds[1] - bounds[0]) * values

        offsets = np.cumsum([0] + links)
        scales = tuple(scaled(u[offsets[i] : offsets[i + 1]], self.mass_scale) for i in range(count))
        friction = tuple(scaled(u[offsets[-1] + i], self.friction) for i in range(count))
        return Sample(scales, friction, scaled(u[-1], self.terrain_height))


def nominal_sample(world: WorldModel) -> Sample:
    """The sample that leaves ``world`` as it is."""
    dtype = world.params.dt.dtype
    return Sample(
        tuple(jnp.ones(m.number_of_links, dtype) for m in world.models),
        tuple(jnp.ones((), dtype) for _ in world.models),
        jnp.zeros((), dtype),
    )


def apply(world: WorldModel, sample: Sample) -> WorldModel:
    """``world`` with the masses, inertias, friction and terrain height of ``sample``."""
    models = tuple(
        m.replace(link_mass=m.link_mass * s, link_inertia=m.link_inertia * s[:, None, None],
                  point_friction=None if m.point_friction is None else m.point_friction * f)
        for m, s, f in zip(world.models, sample.mass_scale, sample.friction)
    )
    model_params = tuple(
        p.replace(contact=p.contact.replace(friction=p.contact.friction * f))
        for p, f in zip(world.model_params, sample.friction)
    )
    terrain = world.params.terrain
    terrain = terrain.replace(plane_offset=terrain.plane_offset + terrain.plane_normal[2] * sample.terrain_height)
    pairs = world.explicit_pairs
    if pairs is not None:
        counts = [m.number_of_links for m in world.models]
        scale = jnp.concatenate([jnp.broadcast_to(f, (n,)) for f, n in zip(sample.friction, counts)])
        pairs = pairs.replace(friction_scale=scale if pairs.friction_scale is None else pairs.friction_scale * scale)
    return world.replace(models=models, model_params=model_params, params=world.params.replace(terrain=terrain), explicit_pairs=pairs)
