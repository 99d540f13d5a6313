"""Every ``<world>`` of an SDF document (the parsers read the first one only).

Each world is read as :func:`jaxsim_like.parsers.parse_world` reads the first: gravity, physics
and every model (inline or included) with its pose.
"""

from __future__ import annotations

import numpy as np

from ..parsers.description import WorldDescription
from ..parsers.sdf import DEFAULT_GRAVITY, _describe_validated, _open, _physics
from ..parsers.sdf_declare import Declarations
from ..parsers.sdf_values import child, child_vector
from ..parsers.xml import error_at


def parse_worlds(source: str) -> list[WorldDescription]:
    """The worlds of an SDF path or XML string, in document order; ModelLoadError if there is none."""
    xml, document, elements = _open(source)
    worlds = [item for item in elements if item.tag == "world"]
    if not worlds:
        raise error_at(xml.root, xml.file, "the document has no <world>")
    descriptions = []
    for world in worlds:
        name = (world.get("name") or "").strip()
        if not name:
            raise error_at(world, xml.file, "missing name")
        gravity_parent = world if child(world, "gravity", xml.file) is not None else world.find("physics")
        declarations = Declarations(world, document)
        declarations.declare_world(world, document)
        descriptions.append(
            WorldDescription(
                name=name,
                gravity=np.asarray(child_vector(gravity_parent, "gravity", DEFAULT_GRAVITY, xml.file), dtype=float),
                physics=_physics(world, xml.file),
                models=[_describe_validated(declarations, node) for node in declarations.models],
                source=xml.file,
            )
        )
    return descriptions
