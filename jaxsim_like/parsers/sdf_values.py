"""Readers of SDFormat values: versions, numbers, vectors, booleans, poses and geometries.

Every reader raises :class:`ModelLoadError` at the element it reads (file and line), for
wrong counts, words that are not numbers and non-finite values. No frame logic here.
"""

from __future__ import annotations

import math
import os
import re
import warnings

import numpy as np
from lxml import etree

from .description import Geometry
from .urdf import rpy_to_rotation
from .uri import resolve_uri
from .xml import describe, error_at

OLDEST_VERSION = (1, 4)
NEWEST_VERSION = (1, 11)

_VERSION = re.compile(r"(\d+)\.(\d+)")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_UNSUPPORTED_SHAPES = ("heightmap", "polyline", "image")
CONE_RIM_VERTICES = 32
"""An SDF ``<cone>`` is the convex mesh of its apex and this many vertices on its base's rim."""


def parse_version(element: etree._Element, file: str | None) -> tuple[int, int]:
    """The ``version`` attribute of ``element`` as ``(major, minor)``; 1.11 when missing."""
    text = element.get("version")
    if text is None or not text.strip():
        return NEWEST_VERSION
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise error_at(element, file, f"malformed SDFormat version '{text}'")
    version = (int(match.group(1)), int(match.group(2)))
    if not OLDEST_VERSION <= version <= NEWEST_VERSION:
        raise error_at(element, file, f"unsupported SDFormat version {text.strip()} (supported: 1.4 to 1.11)")
    return version


def numbers(element: etree._Element, file: str | None, counts: tuple[int, ...]) -> np.ndarray:
    """The finite numbers in the text of ``element``, whose count must be one of ``counts``."""
    words = (element.text or "").split()
    if len(words) not in counts:
        expected = " or ".join(str(count) for count in counts)
        raise error_at(
            element, file, f"expected {expected} number(s), got {len(words)}: '{(element.text or '').strip()}'"
        )
    values = []
    for word in words:
        if word.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise error_at(element, file, f"non-finite value '{word}'")
        if not _NUMBER.fullmatch(word):
            raise error_at(element, file, f"'{word}' is not a number")
        value = float(word)
        if not math.isfinite(value):
            raise error_at(element, file, f"value '{word}' is out of range")
        values.append(value)
    return np.array(values, dtype=float)


def child(parent: etree._Element | None, tag: str, file: str | None) -> etree._Element | None:
    """The single ``<tag>`` child of ``parent`` (None when absent or when ``parent`` is None)."""
    if parent is None:
        return None
    found = parent.findall(tag)
    if len(found) > 1:
        raise error_at(found[1], file, f"several <{tag}> elements in {describe(parent)}")
    return found[0] if found else None


def child_text(parent: etree._Element | None, tag: str, file: str | None) -> str | None:
    """The stripped text of the ``<tag>`` child, None when absent or empty."""
    element = child(parent, tag, file)
    text = (element.text or "").strip() if element is not None else ""
    return text or None


def child_number(parent: etree._Element | None, tag: str, default: float, file: str | None) -> float:
    """The number in the ``<tag>`` child, ``default`` when absent."""
    element = child(parent, tag, file)
    return default if element is None else float(numbers(element, file, (1,))[0])


def child_vector(parent: etree._Element | None, tag: str, default: tuple[float, ...], file: str | None) -> np.ndarray:
    """The vector in the ``<tag>`` child, of the length of ``default``, ``default`` when absent."""
    element = child(parent, tag, file)
    return np.array(default, dtype=float) if element is None else numbers(element, file, (len(default),))


def read_diffuse(visual: etree._Element, file: str | None) -> tuple[float, float, float, float] | None:
    """The ``<material><diffuse>`` of an SDF ``<visual>`` (3 or 4 numbers, clipped to [0, 1]), else None."""
    diffuse = child(child(visual, "material", file), "diffuse", file)
    if diffuse is None:
        return None
    values = numbers(diffuse, file, (3, 4))
    rgba = np.clip(np.append(values, 1.0)[:4], 0.0, 1.0)
    return tuple(float(value) for value in rgba)


def boolean(element: etree._Element, file: str | None) -> bool:
    """An SDFormat boolean: ``true``/``1`` or ``false``/``0``."""
    text = (element.text or "").strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise error_at(element, file, f"'{text}' is not a boolean (true, false, 1 or 0)")


def quaternion_to_rotation(x: float, y: float, z: float, w: float) -> np.ndarray:
    """The rotation ``(3, 3)`` of a unit quaternion given as x, y, z, w."""
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def pose_matrix(element: etree._Element | None, file: str | None) -> np.ndarray:
    """The transform ``(4, 4)`` written in a ``<pose>`` (identity when absent or empty).

    ``x y z roll pitch yaw`` (radians, or degrees with ``degrees="true"``), or with
    ``rotation_format="quat_xyzw"`` ``x y z qx qy qz qw``.
    """
    transform = np.eye(4)
    if element is None or not (element.text or "").strip():
        return transform
    rotation_format = (element.get("rotation_format") or "euler_rpy").strip()
    if rotation_format == "euler_rpy":
        values = numbers(element, file, (6,))
        degrees = element.get("degrees")
        if degrees is not None and degrees.strip().lower() in ("true", "1"):
            values[3:] = np.radians(values[3:])
        elif degrees is not None and degrees.strip().lower() not in ("false", "0"):
            raise error_at(element, file, f"degrees='{degrees}' is not a boolean")
        transform[:3, :3] = rpy_to_rotation(values[3:])
    elif rotation_format == "quat_xyzw":
        values = numbers(element, file, (7,))
        norm = float(np.linalg.norm(values[3:]))
        if norm < 1e-12:
            raise error_at(element, file, "the quaternion is zero")
        transform[:3, :3] = quaternion_to_rotation(*(values[3:] / norm))
    else:
        raise error_at(element, file, f"unknown rotation_format '{rotation_format}' (euler_rpy or quat_xyzw)")
    transform[:3, 3] = values[:3]
    return transform


def pose_reference(element: etree._Element | None) -> str | None:
    """The frame a ``<pose>`` is written in: ``relative_to`` (1.7+) or the 1.5-1.6 ``frame``."""
    if element is None:
        return None
    name = element.get("relative_to")
    if name is None or not name.strip():
        name = element.get("frame")
    return name.strip() if name is not None and name.strip() else None


def _non_negative(element: etree._Element, file: str | None, values, what: str) -> None:
    if any(value < 0.0 for value in np.atleast_1d(values)):
        raise error_at(element, file, f"{what} must not be negative")


def cone_vertices(radius: float, length: float) -> np.ndarray:
    """``(1 + CONE_RIM_VERTICES, 3)`` [m]: SDFormat's cone of base ``radius`` and ``length`` along z,
    centred on its axis's middle (the base at ``z = -length / 2``, the apex at ``+length / 2``)."""
    angles = 2.0 * np.pi * np.arange(CONE_RIM_VERTICES) / CONE_RIM_VERTICES
    rim = np.stack([radius * np.cos(angles), radius * np.sin(angles), np.full(CONE_RIM_VERTICES, -0.5 * length)], axis=1)
    return np.concatenate([[[0.0, 0.0, 0.5 * length]], rim])


def read_geometry(element: etree._Element, file: str | None, directory: str, what: str = "collision") -> Geometry | None:
    """The shape in a ``<geometry>``; None for ``<empty>`` and, with a warning, for
    heightmaps, polylines and images (no shape for them: the ``what`` element is skipped). A
    ``<cone>`` (SDFormat 1.11) is a convex mesh of its vertices (:func:`cone_vertices`)."""
    shapes = [item for item in element if isinstance(item.tag, str)]
    if len(shapes) != 1:
        raise error_at(element, file, f"expected exactly one shape in <geometry>, found {len(shapes)}")
    shape = shapes[0]
    kind = shape.tag
    if kind == "box":
        size = child_vector(shape, "size", (1.0, 1.0, 1.0), file)
        _non_negative(shape, file, size, "box size")
        return Geometry(type="box", size=tuple(size))
    if kind == "sphere":
        radius = child_number(shape, "radius", 1.0, file)
        _non_negative(shape, file, radius, "sphere radius")
        return Geometry(type="sphere", radius=radius)
    if kind in ("cylinder", "capsule"):
        radius = child_number(shape, "radius", 1.0 if kind == "cylinder" else 0.5, file)
        length = child_number(shape, "length", 1.0, file)
        _non_negative(shape, file, (radius, length), f"{kind} radius and length")
        return Geometry(type=kind, radius=radius, length=length)
    if kind == "ellipsoid":
        radii = child_vector(shape, "radii", (1.0, 1.0, 1.0), file)
        _non_negative(shape, file, radii, "ellipsoid radii")
        return Geometry(type="ellipsoid", size=tuple(radii))
    if kind == "cone":
        radius = child_number(shape, "radius", 1.0, file)
        length = child_number(shape, "length", 1.0, file)
        _non_negative(shape, file, (radius, length), "cone radius and length")
        return Geometry(type="mesh", uri="cone", vertices=cone_vertices(radius, length))
    if kind == "plane":
        normal = child_vector(shape, "normal", (0.0, 0.0, 1.0), file)
        norm = float(np.linalg.norm(normal))
        if norm < 1e-12:
            raise error_at(shape, file, "the plane normal is zero")
        size = child_vector(shape, "size", (1.0, 1.0), file)
        return Geometry(type="plane", normal=tuple(normal / norm), size=tuple(size))
    if kind == "mesh":
        uri = child_text(shape, "uri", file)
        if uri is None:
            raise error_at(shape, file, "missing <uri>")
        scale = child_vector(shape, "scale", (1.0, 1.0, 1.0), file)
        path = resolve_uri(uri, directory)
        path = path if path is not None and os.path.isfile(path) else None
        return Geometry(type="mesh", uri=uri, path=path, scale=tuple(scale))
    if kind == "empty":
        return None
    if kind in _UNSUPPORTED_SHAPES:
        where = f"{file or '<string>'}:{shape.sourceline}"
        warnings.warn(f"{where}: <{kind}> geometry is not supported: the {what} is skipped", stacklevel=2)
        return None
    raise error_at(shape, file, f"unknown geometry '{kind}'")
