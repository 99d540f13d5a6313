"""The public loaders: files or strings to a :class:`Model` or a world description."""

from __future__ import annotations

import os
from dataclasses import dataclass


from .dynamics.model import Model, build_model
from .parsers import parse_model, parse_srdf, parse_world
from .parsers.description import LinkDescription, WorldDescription
from .parsers.errors import strictness
from .parsers.shapes import MESH_HULL_VERTICES, SweptPoints, link_collidable_points


@dataclass(frozen=True)
class ContactSampling:
    """How collision shapes become contacts (see :mod:`jaxsim_like.parsers.shapes`): spheres and
    capsules are exact swept points; the counts sample cylinders and box edges. Ellipsoids are
    exact by default: an ellipsoid shape (:mod:`.simulation.collision`) whose one collidable point
    the step moves to its deepest point along the terrain's normal (:mod:`.simulation.ellipsoids`);
    ``sphere_samples = N`` makes each N points of a Fibonacci lattice instead (no shape). A
    cylinder's two rings of ``cylinder_samples`` rim points turn, at every step, towards the
    surface they meet (:mod:`jaxsim_like.simulation.rims`): its rim's deepest point is exact, and
    a cap flat on a face rests on the ring's regular polygon (on a plane, the implicit step's
    slots: on its square, :func:`jaxsim_like.simulation.contact_slots.square_points`).

    Meshes are convex hulls by default: each mesh the hull of at most ``mesh_hulls`` of its
    vertices (:data:`~jaxsim_like.parsers.shapes.MESH_HULL_VERTICES`), a shape that touches other
    hulls, boxes, cylinders (as the prism on their rims), spheres and capsules, and meets the
    terrain at its vertices (the implicit step rests a hull on the terrain on 4 of them at most:
    :mod:`.simulation.contact_slots`).
    ``mesh_max_points = N`` samples each mesh as N points instead (0: meshes do not collide),
    whatever ``mesh_hulls``; ``mesh_hulls = None`` with ``mesh_max_points = None`` makes every
    vertex of each mesh's hull a point."""

    box_edge_samples: int = 0
    sphere_samples: int | None = None
    cylinder_samples: int = 8
    mesh_max_points: int | None = None
    mesh_hulls: int | None = MESH_HULL_VERTICES

    @property
    def hulls(self) -> int | None:
        """The vertex cap of the meshes' hulls, None where meshes are points."""
        return self.mesh_hulls if self.mesh_max_points is None else None

    @property
    def exact_ellipsoids(self) -> bool:
        """Whether ellipsoids are ellipsoid shapes (else sampled points)."""
        return self.sphere_samples is None

    def points(self, link: LinkDescription) -> SweptPoints:
        """The swept points of ``link`` in its frame."""
        return link_collidable_points(
            link,
            box_edge_samples=self.box_edge_samples,
            sphere_samples=self.sphere_samples,
            cylinder_samples=self.cylinder_samples,
            mesh_max_points=self.mesh_max_points,
            mesh_hulls=self.hulls,
        )


def load_model(
    source: str | os.PathLike,
    *,
    floating_base: bool | None = None,
    srdf: str | os.PathLike | None = None,
    contact_sampling: ContactSampling = ContactSampling(),
    strict: bool = False,
) -> Model:
    """Load a URDF, SDF or MJCF model (a path or an XML string; the format is detected).

    ``floating_base`` overrides the file's choice (floating unless the root is welded to the
    world); ``srdf`` (path or string) attaches semantic groups, states and collision pairs,
    checked against the model. Raises :class:`ModelLoadError` on bad input. What loads only
    after a documented fix (an inconsistent inertia, a massless moving subtree, a mimic of a
    missing joint, a missing mesh: see :mod:`jaxsim_like.dynamics.consistency`) warns with
    :class:`ModelLoadWarning`; ``strict=True`` raises :class:`ModelLoadError` instead.
    """
    with strictness(strict):
        description = parse_model(source)
        semantics = parse_srdf(srdf, description) if srdf is not None else None
        return build_model(description, floating_base=floating_base, collidable_points=contact_sampling.points, semantics=semantics,
                           mesh_hulls=contact_sampling.hulls, ellipsoids=contact_sampling.exact_ellipsoids)


def load_world(source: str | os.PathLike, *, strict: bool = False) -> WorldDescription:
    """Read an SDF world, or an MJCF file (one model per tree: each free body and its subtree, and
    the bodies under the world): its name, gravity, physics step (and for MJCF the nearest
    integrator) and every model with its pose.

    ``strict=True`` makes the parser's :class:`ModelLoadWarning` (a mimic naming a missing
    joint, an MJCF integrator read as a different one) a :class:`ModelLoadError`; the models'
    bodies are checked when they are built.
    """
    with strictness(strict):
        return parse_world(source)
