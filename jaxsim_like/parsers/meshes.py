"""Mesh vertices from STL (binary and ASCII), OBJ and simple Collada files, with numpy only.

Vertices are returned in the mesh frame, in metres after ``scale`` (and, for Collada, the
document's ``<unit meter>`` and node transforms) is applied.
"""

from __future__ import annotations

import os
import re

import numpy as np
from lxml import etree

from .errors import ModelLoadError
from .xml import load_xml

_STL_HEADER = 80
_STL_TRIANGLE = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
_STL_VERTEX = re.compile(rb"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)\s*$", re.MULTILINE | re.IGNORECASE)


def _read(path: str) -> bytes:
    if not os.path.isfile(path):
        raise ModelLoadError("mesh file not found", file=path)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise ModelLoadError(f"cannot read mesh: {error.strerror}", file=path) from None


def _stl(path: str, data: bytes) -> np.ndarray:
    count = int(np.frombuffer(data, "<u4", 1, _STL_HEADER)[0]) if len(data) >= _STL_HEADER + 4 else -1
    binary_size = _STL_HEADER + 4 + _STL_TRIANGLE.itemsize * count
    is_ascii = data.lstrip()[:5].lower() == b"solid" and b"facet" in data[:4096].lower()
    if count >= 0 and (len(data) == binary_size or (not is_ascii and len(data) > binary_size)):
        triangles = np.frombuffer(data, _STL_TRIANGLE, count, _STL_HEADER + 4)
        return triangles["vertices"].reshape(-1, 3).astype(float)
    if not is_ascii:
        raise ModelLoadError("not a binary or ASCII STL file (truncated or corrupted)", file=path)
    vertices = []
    for match in _STL_VERTEX.finditer(data):
        try:
            vertices.append([float(value) for value in match.groups()])
        except ValueError:
            line = data.count(b"\n", 0, match.start()) + 1
            raise ModelLoadError(
                f"invalid STL vertex '{match.group(0).strip().decode(errors='replace')}'", file=path, line=line
            ) from None
    return np.array(vertices, dtype=float).reshape(-1, 3)


def _obj(path: str, data: bytes) -> np.ndarray:
    vertices = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        words = line.split()
        if not words or words[0] != "v":
            continue
        try:
            if len(words) < 4:
                raise ValueError
            vertices.append([float(value) for value in words[1:4]])
        except ValueError:
            raise ModelLoadError(f"invalid OBJ vertex '{line.strip()}'", file=path, line=number) from None
    return np.array(vertices, dtype=float).reshape(-1, 3)


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname


def _floats(element: etree._Element, path: str) -> np.ndarray:
    try:
        return np.array([float(word) for word in (element.text or "").split()], dtype=float)
    except ValueError:
        raise ModelLoadError(f"non-numeric values in <{_local(element)}>", file=path, line=element.sourceline) from None


def _node_transform(node: etree._Element, path: str) -> np.ndarray:
    """The transform of a Collada ``<node>``: its transformation elements composed in order."""
    transform = np.eye(4)
    for child in node:
        tag = _local(child)
        if tag in ("lookat", "skew"):
            raise ModelLoadError(f"unsupported Collada transform <{tag}>", file=path, line=child.sourceline)
        if tag not in ("matrix", "translate", "rotate", "scale"):
            continue
        values = _floats(child, path)
        step = np.eye(4)
        expected = {"matrix": 16, "translate": 3, "rotate": 4, "scale": 3}[tag]
        if values.size != expected:
            raise ModelLoadError(f"<{tag}> needs {expected} numbers", file=path, line=child.sourceline)
        if tag == "matrix":
            step = values.reshape(4, 4)
        elif tag == "translate":
            step[:3, 3] = values
        elif tag == "scale":
            step[:3, :3] = np.diag(values)
        else:
            axis, angle = values[:3], np.deg2rad(values[3])
            norm = np.linalg.norm(axis)
            if norm == 0.0:
                raise ModelLoadError("<rotate> with a zero axis", file=path, line=child.sourceline)
            x, y, z = axis / norm
            cross = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
            step[:3, :3] = np.eye(3) + np.sin(angle) * cross + (1 - np.cos(angle)) * cross @ cross
        transform = transform @ step
    return transform


def _collada_positions(path: str, geometry: etree._Element) -> np.ndarray:
    """The POSITION array of a ``<geometry><mesh>``, shape ``(N, 3)``."""
    sources = {element.get("id"): element for element in geometry.iter("{*}source")}
    inputs = [
        element
        for element in geometry.iter("{*}input")
        if element.get("semantic") == "POSITION" and _local(element.getparent()) == "vertices"
    ]
    if not inputs:
        raise ModelLoadError("Collada geometry without POSITION vertices", file=path, line=geometry.sourceline)
    source = sources.get((inputs[0].get("source") or "").lstrip("#"))
    array = source.find("{*}float_array") if source is not None else None
    if array is None:
        raise ModelLoadError("Collada POSITION source without <float_array>", file=path, line=inputs[0].sourceline)
    values = _floats(array, path)
    accessor = source.find("{*}technique_common/{*}accessor")
    stride = accessor.get("stride", "3") if accessor is not None else "3"
    stride = int(stride) if stride.isdigit() else 0
    if stride < 3 or values.size % stride:
        raise ModelLoadError("Collada positions are not 3D points", file=path, line=array.sourceline)
    return values.reshape(-1, stride)[:, :3]


def _collada(path: str) -> np.ndarray:
    root = load_xml(path).root
    if _local(root) != "COLLADA":
        raise ModelLoadError("not a Collada document", file=path, line=root.sourceline)
    if any(True for _ in root.iter("{*}instance_controller", "{*}instance_node")):
        raise ModelLoadError("Collada controllers and node instances are not supported", file=path)
    geometries = {element.get("id"): element for element in root.iter("{*}geometry")}
    unit = root.find("{*}asset/{*}unit")
    meter = 1.0
    if unit is not None:
        try:
            meter = float(unit.get("meter", "1"))
        except ValueError:
            raise ModelLoadError("invalid <unit meter>", file=path, line=unit.sourceline) from None
    scene = root.find("{*}library_visual_scenes/{*}visual_scene")
    pieces = []
    if scene is None:
        pieces = [_collada_positions(path, geometry) for geometry in geometries.values()]
    else:
        stack = [(node, np.eye(4)) for node in scene.findall("{*}node")]
        while stack:
            node, parent = stack.pop()
            transform = parent @ _node_transform(node, path)
            for instance in node.findall("{*}instance_geometry"):
                geometry = geometries.get((instance.get("url") or "").lstrip("#"))
                if geometry is None:
                    raise ModelLoadError("instance of an unknown geometry", file=path, line=instance.sourceline)
                points = _collada_positions(path, geometry)
                pieces.append(points @ transform[:3, :3].T + transform[:3, 3])
            stack.extend((child, transform) for child in node.findall("{*}node"))
    if not pieces:
        return np.zeros((0, 3))
    return np.concatenate(pieces) * meter


def load_mesh_vertices(path: str, scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    """The unique vertices ``(V, 3)`` of the mesh at ``path``, multiplied by ``scale`` ``(3,)``.

    Reads binary and ASCII STL, OBJ and Collada (``.dae``: position arrays with node
    transforms and unit). Raises :class:`ModelLoadError` naming the file when it is
    missing, unreadable, empty, of an unknown format or holds non-finite values.
    """
    path = os.fspath(path)
    extension = os.path.splitext(path)[1].lower()
    if extension == ".stl":
        vertices = _stl(path, _read(path))
    elif extension == ".obj":
        vertices = _obj(path, _read(path))
    elif extension == ".dae":
        vertices = _collada(path)
    else:
        raise ModelLoadError(f"unsupported mesh format '{extension}' (expected .stl, .obj or .dae)", file=path)
    if vertices.shape[0] == 0:
        raise ModelLoadError("mesh has no vertices", file=path)
    if not np.all(np.isfinite(vertices)):
        raise ModelLoadError("mesh has non-finite vertices", file=path)
    _, first = np.unique(vertices, axis=0, return_index=True)
    unique = vertices[np.sort(first)]
    return unique * np.asarray(scale, dtype=float).reshape(1, 3)


def _obj_triangles(path: str, data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """OBJ ``v`` lines and ``f`` lines (``i``, ``i/t``, ``i/t/n``, ``i//n``, negative indices
    relative to the vertices read so far); polygons are split into fans of triangles."""
    vertices: list[list[float]] = []
    faces: list[list[int]] = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        words = line.split()
        if not words or words[0] not in ("v", "f"):
            continue
        try:
            if words[0] == "v":
                if len(words) < 4:
                    raise ValueError
                vertices.append([float(value) for value in words[1:4]])
                continue
            indices = [int(word.split("/")[0]) for word in words[1:]]
            if len(indices) < 3 or 0 in indices:
                raise ValueError
        except ValueError:
            kind = "vertex" if words[0] == "v" else "face"
            raise ModelLoadError(f"invalid OBJ {kind} '{line.strip()}'", file=path, line=number) from None
        corners = [index - 1 if index > 0 else len(vertices) + index for index in indices]
        if any(not 0 <= corner < len(vertices) for corner in corners):
            raise ModelLoadError(f"OBJ face '{line.strip()}' names a vertex not defined before it", file=path, line=number)
        faces.extend([corners[0], corners[k], corners[k + 1]] for k in range(1, len(corners) - 1))
    return np.array(vertices, dtype=float).reshape(-1, 3), np.array(faces, dtype=np.int64).reshape(-1, 3)


def _collada_primitive_faces(path: str, primitive: etree._Element) -> np.ndarray:
    """Triangles ``(F, 3)`` of position indices of a ``<triangles>``, ``<polylist>`` or ``<polygons>``."""
    inputs = primitive.findall("{*}input")
    vertex = [element for element in inputs if element.get("semantic") == "VERTEX"]
    if not vertex:
        raise ModelLoadError(f"Collada <{_local(primitive)}> without a VERTEX input", file=path, line=primitive.sourceline)
    offsets = [int(element.get("offset", "0")) for element in inputs]
    stride, offset = max(offsets) + 1, int(vertex[0].get("offset", "0"))
    polygons = []
    for p in primitive.findall("{*}p"):
        indices = _floats(p, path).astype(np.int64)
        if indices.size % stride:
            raise ModelLoadError(f"<p> has {indices.size} indices, not a multiple of {stride}", file=path, line=p.sourceline)
        polygons.append(indices.reshape(-1, stride)[:, offset])
    kind = _local(primitive)
    if kind == "triangles":
        corners = np.concatenate(polygons) if polygons else np.zeros(0, dtype=np.int64)
        if corners.size % 3:
            raise ModelLoadError("<triangles> indices are not whole triangles", file=path, line=primitive.sourceline)
        return corners.reshape(-1, 3)
    if kind == "polylist":
        counts = _floats(primitive.find("{*}vcount"), path).astype(np.int64) if primitive.find("{*}vcount") is not None else []
        corners = np.concatenate(polygons) if polygons else np.zeros(0, dtype=np.int64)
        if int(np.sum(counts)) != corners.size:
            raise ModelLoadError("<polylist> <vcount> does not match its <p>", file=path, line=primitive.sourceline)
        polygons = np.split(corners, np.cumsum(counts)[:-1]) if len(counts) else []
    fans = [[polygon[0], polygon[k], polygon[k + 1]] for polygon in polygons for k in range(1, len(polygon) - 1)]
    return np.array(fans, dtype=np.int64).reshape(-1, 3)


def _collada_triangles(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of every geometry instance of the first visual scene (every
    geometry when there is none), with node transforms and ``<unit meter>`` applied."""
    root = load_xml(path).root
    vertices = _collada(path)
    geometries = {element.get("id"): element for element in root.iter("{*}geometry")}
    scene = root.find("{*}library_visual_scenes/{*}visual_scene")
    if scene is None:
        instances = list(geometries.values())
    else:
        instances, stack = [], list(scene.findall("{*}node"))
        while stack:
            node = stack.pop()
            instances.extend(geometries[(i.get("url") or "").lstrip("#")] for i in node.findall("{*}instance_geometry"))
            stack.extend(node.findall("{*}node"))
    faces, start = [], 0
    for geometry in instances:
        count = len(_collada_positions(path, geometry))
        for primitive in geometry.iter("{*}triangles", "{*}polylist", "{*}polygons", "{*}tristrips", "{*}trifans"):
            if _local(primitive) in ("tristrips", "trifans"):
                raise ModelLoadError(f"Collada <{_local(primitive)}> is not supported", file=path, line=primitive.sourceline)
            local = _collada_primitive_faces(path, primitive)
            if local.size and (local.min() < 0 or local.max() >= count):
                raise ModelLoadError("Collada triangle index out of range", file=path, line=primitive.sourceline)
            faces.append(local + start)
        start += count
    return vertices, np.concatenate(faces) if faces else np.zeros((0, 3), dtype=np.int64)


def load_mesh_triangles(path: str, scale=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """The triangles of the mesh at ``path``: ``vertices (V, 3)`` [m], multiplied by ``scale (3,)``,
    and ``faces (F, 3)`` (int64 indices into ``vertices``, counter-clockwise as in the file).

    Reads the formats of :func:`load_mesh_vertices` (OBJ and Collada polygons are split into
    triangles; STL vertices shared by triangles are merged). Raises :class:`ModelLoadError`
    naming the file (and line) for the errors listed there, for a face naming a missing vertex
    and for a mesh without triangles.
    """
    path = os.fspath(path)
    extension = os.path.splitext(path)[1].lower()
    if extension == ".stl":
        corners = _stl(path, _read(path))
        vertices, inverse = np.unique(corners, axis=0, return_inverse=True)
        faces = inverse.reshape(-1, 3)
    elif extension == ".obj":
        vertices, faces = _obj_triangles(path, _read(path))
    elif extension == ".dae":
        vertices, faces = _collada_triangles(path)
    else:
        raise ModelLoadError(f"unsupported mesh format '{extension}' (expected .stl, .obj or .dae)", file=path)
    if faces.shape[0] == 0:
        raise ModelLoadError("mesh has no triangles", file=path)
    if not np.all(np.isfinite(vertices)):
        raise ModelLoadError("mesh has non-finite vertices", file=path)
    return vertices * np.asarray(scale, dtype=float).reshape(1, 3), faces.astype(np.int64)
