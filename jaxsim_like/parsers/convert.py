"""ScenarIO's SDF helpers: URDF to SDF conversion, SDF lookup and queries, the empty world.

Unlike ScenarIO, which returns an empty string on failure, these helpers raise:
:class:`ModelLoadError` for invalid documents and :class:`FileNotFoundError` for files that
cannot be found.

The URDF to SDF conversion writes SDF 1.7 from the parsed :class:`ModelDescription`, so that
the SDF parser reads back the same links, joints, inertials, collisions and visuals (colours as
``<diffuse>``). Every link is kept (fixed
joints are not lumped). Link poses are relative to the model frame, joint poses are the
identity (the URDF joint frame is the child frame, the SDF default) and axes are expressed in
the joint frame. Massless links get an explicit zero ``<inertial>`` (SDF would otherwise
default to 1 kg). A mimic becomes ``<axis><mimic>`` as SDF 1.11 writes it.
"""

from __future__ import annotations

import math
import os

import numpy as np
from lxml import etree

from .description import Geometry, Inertial, JointDescription, LinkDescription, ModelDescription
from .errors import ModelLoadError
from .sdf import parse_sdf, parse_sdf_world
from .urdf import WORLD, parse_urdf
from .uri import model_search_path, resolve_uri
from .xml import XmlSource, load_xml, looks_like_xml

SDF_VERSION = "1.7"

_EMPTY_WORLD = """<?xml version="1.0" ?>
<sdf version="1.7">
  <world name="default">
    <physics default="true" type="dart">
      <max_step_size>0.001</max_step_size>
      <real_time_factor>1.0</real_time_factor>
    </physics>
    <light type="directional" name="sun">
      <cast_shadows>true</cast_shadows>
      <pose>0 0 10 0 0 0</pose>
      <diffuse>1 1 1 1</diffuse>
      <specular>0.5 0.5 0.5 1</specular>
      <attenuation>
        <range>1000</range>
        <constant>0.9</constant>
        <linear>0.01</linear>
        <quadratic>0.001</quadratic>
      </attenuation>
      <direction>-0.5 0.1 -0.9</direction>
    </light>
  </world>
</sdf>
"""


def rotation_to_rpy(rotation) -> tuple[float, float, float]:
    """Fixed-axis roll, pitch, yaw [rad] of a rotation ``(3, 3)`` with ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    R = np.asarray(rotation, dtype=float)
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if math.hypot(R[0, 0], R[1, 0]) < 1e-12:
        return math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def _numbers(values) -> str:
    return " ".join(repr(float(value) + 0.0) for value in values)


def _pose(transform: np.ndarray) -> str:
    return _numbers([*transform[:3, 3], *rotation_to_rpy(transform[:3, :3])])


def _add(parent: etree._Element, tag: str, text: str | None = None, **attributes: str) -> etree._Element:
    element = etree.SubElement(parent, tag, **attributes)
    if text is not None:
        element.text = text
    return element


def _geometry(parent: etree._Element, geometry: Geometry) -> None:
    element = _add(_add(parent, "geometry"), geometry.type)
    if geometry.type == "box":
        _add(element, "size", _numbers(geometry.size))
    elif geometry.type == "sphere":
        _add(element, "radius", _numbers([geometry.radius]))
    elif geometry.type in ("cylinder", "capsule"):
        _add(element, "radius", _numbers([geometry.radius]))
        _add(element, "length", _numbers([geometry.length]))
    elif geometry.type == "ellipsoid":
        _add(element, "radii", _numbers(geometry.size))
    elif geometry.type == "plane":
        _add(element, "normal", _numbers(geometry.normal))
        _add(element, "size", _numbers(geometry.size))
    else:
        _add(element, "uri", geometry.path or geometry.uri)
        _add(element, "scale", _numbers(geometry.scale))


_INERTIA_ENTRIES = (("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2), ("izz", 2, 2))


def _link(model: etree._Element, link: LinkDescription, M_H_L: np.ndarray) -> None:
    element = _add(model, "link", name=link.name)
    _add(element, "pose", _pose(M_H_L))
    inertial = link.inertial if link.inertial is not None else Inertial(mass=0.0)
    written = _add(element, "inertial")
    _add(written, "pose", _pose(inertial.L_H_I))
    _add(written, "mass", _numbers([inertial.mass]))
    inertia = _add(written, "inertia")
    for tag, row, column in _INERTIA_ENTRIES:
        _add(inertia, tag, _numbers([inertial.inertia[row, column]]))
    for collision in link.collisions:
        shape = _add(element, "collision", name=collision.name)
        _add(shape, "pose", _pose(collision.L_H_G))
        _geometry(shape, collision.geometry)
    for visual in link.visuals:
        shape = _add(element, "visual", name=visual.name)
        _add(shape, "pose", _pose(visual.L_H_G))
        _geometry(shape, visual.geometry)
        if visual.rgba is not None:
            _add(_add(shape, "material"), "diffuse", _numbers(visual.rgba))


def _joint(model: etree._Element, joint: JointDescription) -> None:
    element = _add(model, "joint", name=joint.name, type=joint.type)
    _add(element, "parent", joint.parent)
    _add(element, "child", joint.child)
    if joint.type == "fixed":
        return
    axis = _add(element, "axis")
    _add(axis, "xyz", _numbers(joint.axis))
    limits = joint.limits
    bounds = [("lower", limits.lower), ("upper", limits.upper)] if joint.type != "continuous" else []
    written = [
        (tag, value)
        for tag, value in [*bounds, ("effort", limits.effort), ("velocity", limits.velocity)]
        if math.isfinite(value)
    ]
    if written:
        limit = _add(axis, "limit")
        for tag, value in written:
            _add(limit, tag, _numbers([value]))
    dynamics = _add(axis, "dynamics")
    _add(dynamics, "damping", _numbers([joint.damping]))
    _add(dynamics, "friction", _numbers([joint.friction]))
    if joint.mimic is not None:
        mimic = _add(axis, "mimic", joint=joint.mimic.joint)
        _add(mimic, "multiplier", _numbers([joint.mimic.multiplier]))
        _add(mimic, "offset", _numbers([joint.mimic.offset]))
        _add(mimic, "reference", "0.0")


def _model_poses(description: ModelDescription) -> dict[str, np.ndarray]:
    """``M_H_L`` of every link at zero joint positions."""
    poses = {description.root: description.M_H_root}
    children: dict[str, list[JointDescription]] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append(joint)
    stack = [description.root]
    while stack:
        parent = stack.pop()
        for joint in children.get(parent, []):
            poses[joint.child] = poses[parent] @ joint.P_H_C
            stack.append(joint.child)
    return poses


def description_to_sdfstring(description: ModelDescription, world_joint: str = "world_joint") -> str:
    """An SDF 1.7 ``<model>`` string of ``description``; ``world_joint`` names the weld to the world."""
    sdf = etree.Element("sdf", version=SDF_VERSION)
    model = _add(sdf, "model", name=description.name)
    if description.static:
        _add(model, "static", "true")
    if not np.allclose(description.W_H_M, np.eye(4)):
        _add(model, "pose", _pose(description.W_H_M))
    poses = _model_poses(description)
    for link in description.links:
        if link.name != WORLD:
            _link(model, link, poses[link.name])
    if description.fixed_to_world and description.root != WORLD:
        weld = _add(model, "joint", name=world_joint, type="fixed")
        _add(weld, "parent", WORLD)
        _add(weld, "child", description.root)
    for joint in description.joints:
        _joint(model, joint)
    return '<?xml version="1.0" ?>\n' + etree.tostring(sdf, pretty_print=True, encoding="unicode")


def _world_joint_name(document: XmlSource) -> str:
    for joint in document.root.findall("joint"):
        parent = joint.find("parent")
        if parent is not None and parent.get("link") == WORLD and joint.get("name"):
            return joint.get("name")
    return "world_joint"


def urdfstring_to_sdfstring(urdf_string: str) -> str:
    """The SDF 1.7 string of a URDF string (every link kept, see the module docstring)."""
    if not looks_like_xml(urdf_string):
        raise ModelLoadError("expected a URDF XML string (use urdffile_to_sdfstring for a file)")
    return description_to_sdfstring(parse_urdf(urdf_string), _world_joint_name(load_xml(urdf_string)))


def urdffile_to_sdfstring(urdf_file: str | os.PathLike) -> str:
    """The SDF 1.7 string of a URDF file; mesh URIs become the resolved absolute paths."""
    path = os.fspath(urdf_file)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"URDF file '{path}' not found")
    return description_to_sdfstring(parse_urdf(path), _world_joint_name(load_xml(path)))


def _sdf_document(sdf: str | os.PathLike) -> XmlSource:
    document = load_xml(sdf if looks_like_xml(sdf) else find_sdf_file(os.fspath(sdf)))
    if document.root.tag != "sdf":
        raise ModelLoadError(
            "not an SDF document (root is not <sdf>)", file=document.file, line=document.root.sourceline
        )
    return document


def _check_sdf(sdf: str) -> None:
    """Parse an SDF string or path fully, raising :class:`ModelLoadError` when invalid."""
    if _sdf_document(sdf).root.find("world") is not None:
        parse_sdf_world(sdf)
    else:
        parse_sdf(sdf)


def sdf_string_valid(sdf_string: str) -> bool:
    """True when ``sdf_string`` holds an SDF model or world that the SDF parser loads."""
    try:
        _check_sdf(sdf_string)
    except (ModelLoadError, FileNotFoundError):
        return False
    return True


def get_sdf_string(sdf_or_path: str | os.PathLike) -> str:
    """The SDF string of an SDF string, an SDF file, or a file name found with :func:`find_sdf_file`.

    A URDF file or string is converted. Raises :class:`ModelLoadError` when the document is
    invalid and :class:`FileNotFoundError` when the file cannot be found.
    """
    from_string = looks_like_xml(sdf_or_path)
    source = sdf_or_path if from_string else find_sdf_file(os.fspath(sdf_or_path))
    if load_xml(source).root.tag == "robot":
        return urdfstring_to_sdfstring(source) if from_string else urdffile_to_sdfstring(source)
    _check_sdf(source)
    if from_string:
        return source
    with open(source, encoding="utf-8") as handle:
        return handle.read()


def _named(document: XmlSource, elements: list, index: int, kind: str) -> str:
    if not 0 <= index < len(elements):
        raise ModelLoadError(
            f"no {kind} with index {index} ({len(elements)} {kind}(s) in the document)", file=document.file
        )
    name = elements[index].get("name")
    if not name:
        raise ModelLoadError(
            f"{kind} without a name", file=document.file, line=elements[index].sourceline, element=f"<{kind}>"
        )
    return name


def get_model_name_from_sdf(sdf: str | os.PathLike, model_index: int = 0) -> str:
    """The name of the ``model_index``-th model of an SDF string or file (a world's models count too)."""
    document = _sdf_document(sdf)
    return _named(document, document.root.xpath("model | world/model"), model_index, "model")


def get_world_name_from_sdf(sdf: str | os.PathLike, world_index: int = 0) -> str:
    """The name of the ``world_index``-th world of an SDF string or file."""
    document = _sdf_document(sdf)
    return _named(document, document.root.findall("world"), world_index, "world")


def get_empty_world() -> str:
    """ScenarIO's empty world: an SDF 1.7 world named ``default`` with a sun, no models and no ground."""
    return _EMPTY_WORLD


def _sdf_in_folder(folder: str) -> str | None:
    config = os.path.join(folder, "model.config")
    if os.path.isfile(config):
        entry = load_xml(config).root.find("sdf")
        if entry is not None and entry.text and os.path.isfile(os.path.join(folder, entry.text.strip())):
            return os.path.join(folder, entry.text.strip())
    if os.path.isfile(os.path.join(folder, "model.sdf")):
        return os.path.join(folder, "model.sdf")
    candidates = sorted(name for name in os.listdir(folder) if name.endswith(".sdf"))
    return os.path.join(folder, candidates[0]) if len(candidates) == 1 else None


def find_sdf_file(name: str) -> str:
    """The absolute path of the SDF file named by ``name``.

    ``name`` is a path, a ``model://`` URI, or a file or model folder name looked up in
    GZ_SIM_RESOURCE_PATH, SDF_PATH, IGN_GAZEBO_RESOURCE_PATH and GAZEBO_MODEL_PATH. A folder
    gives the file named by its ``model.config``, else its ``model.sdf``, else its only
    ``.sdf`` file. Raises :class:`FileNotFoundError` when nothing is found.
    """
    if not name:
        raise FileNotFoundError("empty SDF file name")
    if "://" in name:
        found = resolve_uri(name)
    elif os.path.exists(name):
        found = os.path.abspath(name)
    else:
        candidates = (os.path.join(folder, name) for folder in model_search_path())
        found = next((os.path.abspath(path) for path in candidates if os.path.exists(path)), None)
    if found is not None and os.path.isdir(found):
        found = _sdf_in_folder(found)
    if found is None:
        searched = os.pathsep.join(model_search_path()) or "(empty)"
        raise FileNotFoundError(
            f"SDF file '{name}' not found: not a path, and not in the model search path {searched} "
            "(set GZ_SIM_RESOURCE_PATH)"
        )
    return found
