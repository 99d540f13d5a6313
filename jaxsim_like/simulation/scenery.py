"""The terrain's static boxes as a model of a world: a base welded to the world whose one link
holds a box shape per box.

Met through a body's collidable points alone (:func:`.terrain.penetration`), a static box has no
edges: a box's edge under a body's face is no contact, so a body over a table's edge tips over
it and falls, and a cube whose face is flush with the edge has its corners pushed out through
the table's side. As shapes of a model welded to the world, the boxes meet the bodies' shapes
through the narrow phases of the pairs (:mod:`.collision`), which clip a face against a face and
find an edge crossing a face, with the pairs' law and tangential memory; the welded side does
not move (its inverse weight is zero: :func:`.collision.collisions.link_inverse_weights`).
:meth:`.world.WorldModel.build` appends this model to a world's models.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from ..dynamics.model import Model, build_model
from ..parsers.description import Collision, Geometry, Inertial, LinkDescription, ModelDescription
from .terrain import Terrain

NAME = "terrain"
"""The name of the model of a terrain's boxes, and of its link."""


def boxes_model(terrain: Terrain) -> Model:
    """The model, welded to the world at its origin, whose one link's collisions are the static
    boxes of ``terrain`` (``W_H_box`` their poses in the link frame, which is the world's),
    without collidable points (no terrain contacts: nothing moves it; the narrow phases of a box
    against the bodies' shapes are complete, a cylinder's included: its side, its ends' discs
    and a box's corner on its cap). Its mass (1 kg, unit inertia) never moves it."""
    transforms = np.asarray(terrain.box_transforms, dtype=float)
    half_extents = np.asarray(terrain.box_half_extents, dtype=float)
    collisions = [Collision(name=f"box_{k}", L_H_G=W_H_box, geometry=Geometry(type="box", size=tuple(2 * extents)))
                  for k, (W_H_box, extents) in enumerate(zip(transforms, half_extents))]
    link = LinkDescription(name=NAME, inertial=Inertial(mass=1.0, inertia=np.eye(3)), collisions=collisions)
    description = ModelDescription(name=NAME, links=[link], joints=[], root=NAME, fixed_to_world=True)
    return build_model(description, floating_base=False)


def without_boxes(terrain: Terrain) -> Terrain:
    """``terrain``'s ground alone (its plane or height function), its static boxes left out."""
    dtype = terrain.box_transforms.dtype
    return dataclasses.replace(terrain, box_transforms=jnp.zeros((0, 4, 4), dtype), box_half_extents=jnp.zeros((0, 3), dtype))
