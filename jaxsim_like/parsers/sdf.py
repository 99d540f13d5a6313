"""SDFormat parser (versions 1.4 to 1.11): models and worlds into plain descriptions.

Pose frame semantics follow the specification of each file's version: ``<pose
relative_to>`` (1.7+, and the 1.5-1.6 ``frame`` attribute) with the defaults links ->
model frame, joints -> child frame, frames -> their ``attached_to``, collisions, visuals and
inertials -> their link, nested models -> the enclosing model; ``<frame attached_to>``;
``__model__``; nested models with scoped names (``outer::inner::link``); ``<include>``
with ``<name>``, ``<pose>``, ``<static>``, ``<placement_frame>`` overrides and ``merge``;
joint axes in their ``expressed_in`` frame (1.7+), or in the joint frame unless
``use_parent_model_frame`` (1.5-1.6; always the model frame in 1.4). See
:mod:`.sdf_describe` for how the joints, the root and the defaults map to the description.
Visuals keep their shape and ``<material><diffuse>`` colour (scripts and textures are ignored);
sensors, lights and surface properties but the collisions' friction (:mod:`.surfaces`) are
ignored; plugins and elements that SDFormat does not define are ignored with a warning
(:mod:`.sdf_elements`).
"""

from __future__ import annotations

import os

import numpy as np

from .description import ModelDescription, PhysicsDescription, WorldDescription
from .sdf_declare import Declarations, Document
from .sdf_describe import describe_model
from .sdf_elements import warn_ignored
from .sdf_frames import Node
from .sdf_values import NEWEST_VERSION, child, child_number, child_vector, parse_version
from .surfaces import with_surfaces, with_world_bitmasks
from .validate import validate_description
from .xml import XmlSource, error_at, load_xml, warn_at

DEFAULT_GRAVITY = (0.0, 0.0, -9.8)


def _open(source: str | os.PathLike) -> tuple[XmlSource, Document, list]:
    """The document, its :class:`Document` and the elements under ``<sdf>``."""
    xml = load_xml(source)
    root = xml.root
    warn_ignored(root, xml.file)
    if root.tag == "sdf":
        return xml, Document(xml.file, xml.directory, parse_version(root, xml.file)), list(root)
    if root.tag in ("model", "world"):
        return xml, Document(xml.file, xml.directory, NEWEST_VERSION), [root]
    raise error_at(root, xml.file, "expected an <sdf> document")


def _describe_validated(declarations: Declarations, node: Node) -> list[ModelDescription]:
    """The validated descriptions of a world-level model, one per tree (see :func:`describe_model`)."""
    descriptions = [with_surfaces(description) for description in describe_model(declarations, node)]
    for description in descriptions:
        validate_description(description)
    return descriptions


def _first_tree(declarations: Declarations, node: Node) -> ModelDescription:
    """The validated description of a model's first tree, with a warning naming the others."""
    first, *others = _describe_validated(declarations, node)
    if others:
        names = ", ".join(f"'{other.name}'" for other in others)
        warn_at(node.element, node.file, f"links of model '{node.name}' are not all joined: the model is its canonical link's tree "
                                         f"'{first.name}'; load_world loads the others too ({names}), as free models")
    return first


def parse_sdf(source: str | os.PathLike, model_name: str | None = None) -> ModelDescription:
    """Parse an SDFormat path or XML string into a validated :class:`ModelDescription`.

    The first ``<model>`` of the document, or the one named ``model_name``; models of a
    ``<world>`` (including ``<include>`` ones, by their overridden name) are also found,
    with their world pose in ``W_H_M``. Raises :class:`ModelLoadError` at the offending
    element for malformed documents, unknown frames, frame cycles and unsupported features.
    """
    xml, document, elements = _open(source)
    models = [item for item in elements if item.tag == "model"]
    chosen = models[0] if model_name is None and models else None
    if model_name is not None:
        chosen = next((item for item in models if (item.get("name") or "").strip() == model_name), None)
    if chosen is not None:
        declarations = Declarations(xml.root, document)
        return _first_tree(declarations, declarations.declare_model(chosen, declarations.world, document))
    names = [(item.get("name") or "").strip() for item in models]
    for world in (item for item in elements if item.tag == "world"):
        declarations = Declarations(world, document)
        declarations.declare_world(world, document)
        for node in declarations.models:
            if model_name is None or node.name == model_name:
                return _first_tree(declarations, node)
            names.append(node.name)
    if model_name is None:
        raise error_at(xml.root, xml.file, "the document has no <model>")
    raise error_at(xml.root, xml.file, f"no model named '{model_name}' (found: {', '.join(names) or 'none'})")


def _physics(world, file: str | None) -> PhysicsDescription:
    candidates = world.findall("physics")
    if not candidates:
        return PhysicsDescription(step_size=0.001, real_time_factor=1.0, type="ode")
    default = [
        item for item in candidates if item.get("default") is not None and item.get("default").strip() in ("true", "1")
    ]
    physics = (default or candidates)[0]
    step_size = child_number(physics, "max_step_size", 0.001, file)
    if step_size <= 0.0:
        raise error_at(child(physics, "max_step_size", file), file, f"max_step_size must be positive, got {step_size}")
    real_time_factor = child_number(physics, "real_time_factor", 1.0, file)
    if real_time_factor < 0.0:
        raise error_at(child(physics, "real_time_factor", file), file, "real_time_factor must not be negative")
    return PhysicsDescription(
        step_size=step_size,
        real_time_factor=real_time_factor,
        type=(physics.get("type") or "ode").strip(),
    )


def parse_sdf_worlds(source: str | os.PathLike) -> list[WorldDescription]:
    """Parse every ``<world>`` of an SDFormat path or XML string, in document order.

    Gravity [m/s^2] comes from ``<world><gravity>`` (``<physics><gravity>`` in 1.4), by
    default ``0 0 -9.8``; the physics settings from the ``<physics default="true">``, or
    the first one; every ``<model>`` and ``<include>`` becomes a validated description
    with its world pose ``W_H_M``.
    """
    xml, document, elements = _open(source)
    worlds = [item for item in elements if item.tag == "world"]
    if not worlds:
        raise error_at(xml.root, xml.file, "the document has no <world>")
    return [_world_description(world, xml, document) for world in worlds]


def parse_sdf_world(source: str | os.PathLike) -> WorldDescription:
    """Parse the first ``<world>`` of an SDFormat path or XML string (see :func:`parse_sdf_worlds`)."""
    return parse_sdf_worlds(source)[0]


def _world_description(world, xml: XmlSource, document: Document) -> WorldDescription:
    name = (world.get("name") or "").strip()
    if not name:
        raise error_at(world, xml.file, "missing name")
    gravity_parent = world if child(world, "gravity", xml.file) is not None else world.find("physics")
    gravity = child_vector(gravity_parent, "gravity", DEFAULT_GRAVITY, xml.file)
    declarations = Declarations(world, document)
    declarations.declare_world(world, document)
    return WorldDescription(
        name=name,
        gravity=np.asarray(gravity, dtype=float),
        physics=_physics(world, xml.file),
        models=with_world_bitmasks([tree for node in declarations.models for tree in _describe_validated(declarations, node)]),
        source=xml.file,
    )
