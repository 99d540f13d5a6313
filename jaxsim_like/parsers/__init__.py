"""Model loading: URDF, SDF and SRDF documents into plain descriptions (no JAX here).

``parse_model`` reads a URDF, SDF or MJCF model (path or XML string), ``parse_world`` an SDF or MJCF world;
both raise :class:`ModelLoadError` naming file, line and element on bad input.
"""

from __future__ import annotations

import os

from .convert import (
    find_sdf_file,
    get_empty_world,
    get_model_name_from_sdf,
    get_sdf_string,
    get_world_name_from_sdf,
    sdf_string_valid,
    urdffile_to_sdfstring,
    urdfstring_to_sdfstring,
)
from .description import (
    ActuatorDescription,
    BallCone,
    Collision,
    CollisionRules,
    ContactPair,
    FluidDescription,
    FluidGeomDescription,
    FrameDescription,
    Geometry,
    Inertial,
    JointDescription,
    JointLimits,
    LinkDescription,
    LoopClosure,
    Mimic,
    MocapBody,
    ModelDescription,
    PhysicsDescription,
    SoftLimit,
    SourceLocation,
    TendonDescription,
    TendonEqualityDescription,
    TendonSegment,
    TendonWrap,
    TerrainDescription,
    Visual,
    WorldClosure,
    WorldDescription,
)
from .errors import ModelLoadError, ModelLoadWarning
from .mjcf import parse_mjcf, parse_mjcf_world
from .sdf import parse_sdf, parse_sdf_world, parse_sdf_worlds
from .srdf import parse_srdf
from .urdf import parse_urdf
from .validate import validate_description
from .xml import error_at, load_xml

__all__ = [
    "ActuatorDescription",
    "BallCone",
    "Collision",
    "CollisionRules",
    "ContactPair",
    "FluidDescription",
    "FluidGeomDescription",
    "FrameDescription",
    "Geometry",
    "Inertial",
    "JointDescription",
    "JointLimits",
    "LinkDescription",
    "LoopClosure",
    "Mimic",
    "MocapBody",
    "ModelDescription",
    "ModelLoadError",
    "ModelLoadWarning",
    "PhysicsDescription",
    "SoftLimit",
    "SourceLocation",
    "TendonDescription",
    "TendonEqualityDescription",
    "TendonSegment",
    "TendonWrap",
    "TerrainDescription",
    "Visual",
    "WorldClosure",
    "WorldDescription",
    "find_sdf_file",
    "get_empty_world",
    "get_model_name_from_sdf",
    "get_sdf_string",
    "get_world_name_from_sdf",
    "parse_mjcf",
    "parse_mjcf_world",
    "parse_model",
    "parse_sdf",
    "parse_sdf_world",
    "parse_sdf_worlds",
    "parse_sdf",
    "parse_sdf_world",
    "parse_srdf",
    "parse_urdf",
    "parse_world",
    "sdf_string_valid",
    "urdffile_to_sdfstring",
    "urdfstring_to_sdfstring",
    "validate_description",
]


def parse_model(source: str | os.PathLike) -> ModelDescription:
    """The model of a URDF (``<robot>``), SDF (``<sdf>``, first model) or MJCF (``<mujoco>``, through
    MuJoCo's compiler: the ``mjcf`` extra) path or XML string."""
    document = load_xml(source)
    if document.root.tag == "robot":
        return parse_urdf(source)
    if document.root.tag == "sdf":
        return parse_sdf(source)
    if document.root.tag == "mujoco":
        return parse_mjcf(source)
    raise error_at(document.root, document.file, "unknown model format: expected a <robot> (URDF), <sdf> or <mujoco> (MJCF) root")


def parse_world(source: str | os.PathLike) -> WorldDescription:
    """The world of an SDF or MJCF (one model per tree) path or XML string: gravity, physics and
    models with their poses."""
    if load_xml(source).root.tag == "mujoco":
        return parse_mjcf_world(source)
    return parse_sdf_world(source)
