"""ScenarIO's module helpers: normalisation, random strings, verbosity, SDF helpers, Fuel, casts.

The SDF helpers (``get_sdf_string``, ``urdfstring_to_sdfstring``, ``get_empty_world``...) come
from :mod:`jaxsim_like.parsers` and raise where ScenarIO returns an empty string.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import string
from typing import Any

import numpy as np

from .. import parsers
from ..parsers import (
    get_empty_world,
    parse_model,
    sdf_string_valid,
    urdffile_to_sdfstring,
    urdfstring_to_sdfstring,
)
from ..parsers.xml import load_xml, looks_like_xml
from . import errors
from .types import Verbosity, as_tuple

__all__ = [
    "ToGazeboJoint",
    "ToGazeboLink",
    "ToGazeboModel",
    "ToGazeboWorld",
    "denormalize",
    "find_sdf_file",
    "get_empty_world",
    "get_ground_plane",
    "get_install_prefix",
    "get_model_file_from_fuel",
    "get_model_name_from_sdf",
    "get_random_string",
    "get_sdf_string",
    "get_world_name_from_sdf",
    "insert_plugin_to_gazebo_entity",
    "normalize",
    "sdf_string_valid",
    "set_verbosity",
    "urdffile_to_sdfstring",
    "urdfstring_to_sdfstring",
]

log = logging.getLogger("jaxsim_like.api")

_LOG_LEVELS = {
    Verbosity.suppress_all: logging.CRITICAL + 10,
    Verbosity.error: logging.ERROR,
    Verbosity.warning: logging.WARNING,
    Verbosity.info: logging.INFO,
    Verbosity.debug: logging.DEBUG,
}


def set_verbosity(level: int = Verbosity.warning) -> None:
    """Set the log level of the object API (the ``jaxsim_like.api`` logger) process-wise.

    ``suppress_all`` (0), ``error`` (1), ``warning`` (2, the default), ``info`` (3), ``debug`` (4).
    """
    try:
        verbosity = Verbosity(int(level))
    except ValueError:
        raise ValueError(f"unknown verbosity {level!r}; expected one of {[int(v) for v in Verbosity]}") from None
    log.setLevel(_LOG_LEVELS[verbosity])


def _broadcast(input: Any, low: Any, high: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        return np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (input, low, high)))
    except ValueError as error:
        raise ValueError(f"input, low and high cannot be broadcast together: {error}") from None


def normalize(input: Any, low: Any, high: Any) -> tuple[float, ...]:
    """``2 (v - l) / (h - l) - 1``, elementwise after numpy broadcasting, as a tuple (ScenarIO's
    ``Tuple[float]``); where ``l == h`` the input is returned unchanged. ValueError if the
    arguments do not broadcast."""
    v, l, h = _broadcast(input, low, high)
    span = h - l
    same = span == 0
    return as_tuple(np.where(same, v, 2 * (v - l) / np.where(same, 1.0, span) - 1))


def denormalize(input: Any, low: Any, high: Any) -> tuple[float, ...]:
    """``(v + 1) (h - l) / 2 + l``, the inverse of :func:`normalize` (where ``l == h`` the input
    is returned unchanged). ScenarIO's documentation prints ``- l``, a typo of the inverse."""
    v, l, h = _broadcast(input, low, high)
    return as_tuple(np.where(h == l, v, 0.5 * (v + 1) * (h - l) + l))


def get_random_string(length: int) -> str:
    """A random alphanumeric string of ``length`` characters."""
    if int(length) < 0:
        raise ValueError(f"length must be non-negative, got {length}")
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(int(length)))


_GROUND_PLANE = """<?xml version="1.0" ?>
<sdf version="1.7">
  <model name="ground_plane">
    <static>true</static>
    <link name="link">
      <collision name="collision">
        <geometry>
          <plane>
            <normal>0 0 1</normal>
            <size>{size} {size}</size>
          </plane>
        </geometry>
      </collision>
    </link>
  </model>
</sdf>
"""


def get_ground_plane(size: float = 100.0) -> str:
    """An SDF string of gym-ignition's ``ground_plane``: a static model named ``ground_plane``
    whose link ``link`` has a horizontal ``<plane>`` collision through the origin."""
    return _GROUND_PLANE.format(size=float(size))


def get_install_prefix() -> str:
    """ScenarIO's CMake install prefix in Developer mode: always empty here (a pip package)."""
    return ""


def find_sdf_file(file_name: str) -> str:
    """The absolute path of an SDF file: a path, a ``model://`` URI, or a file or model folder
    found in GZ_SIM_RESOURCE_PATH (see :func:`jaxsim_like.parsers.find_sdf_file`)."""
    return parsers.find_sdf_file(file_name)


def get_sdf_string(file_name: str | os.PathLike) -> str:
    """The SDF string of an SDF file (a URDF file is converted); see :func:`jaxsim_like.parsers.get_sdf_string`."""
    return parsers.get_sdf_string(file_name)


def get_world_name_from_sdf(file_name: str | os.PathLike, world_index: int = 0) -> str:
    """The name of the ``world_index``-th world of an SDF file or string."""
    return parsers.get_world_name_from_sdf(file_name, world_index)


def get_model_name_from_sdf(file_name: str | os.PathLike, model_index: int = 0) -> str:
    """The name of a model of an SDF (or, as sdformat converts them, URDF) file or string."""
    source = os.fspath(file_name)
    document = load_xml(source if looks_like_xml(source) else find_sdf_file(source))
    if document.root.tag == "robot":
        if model_index != 0:
            raise errors.ModelError(f"a URDF holds one model, asked for index {model_index}", str(file_name))
        return parse_model(document.file or source).name
    return parsers.get_model_name_from_sdf(source, model_index)


_FUEL_URI = re.compile(r"^https?://(?P<server>[^/]+)/(?:\d+\.\d+/)?(?P<owner>[^/]+)/models/(?P<name>[^/]+)/?(?:(?P<version>\d+)/?)?$")


def _fuel_cache_roots() -> list[str]:
    roots = [os.environ.get(name) for name in ("GZ_FUEL_CACHE_PATH", "IGN_FUEL_CACHE_PATH")]
    home = os.path.expanduser("~")
    roots += [os.path.join(home, ".gz", "fuel"), os.path.join(home, ".ignition", "fuel")]
    return [root for root in roots if root and os.path.isdir(root)]


def get_model_file_from_fuel(uri: str, use_cache: bool = False) -> str:
    """The SDF file of a Fuel model found in the local Fuel cache (``~/.gz/fuel``,
    ``~/.ignition/fuel`` or ``GZ_FUEL_CACHE_PATH``), newest version first.

    Nothing is downloaded (``use_cache`` is accepted for compatibility): a model that is not in
    the cache raises :class:`~jaxsim_like.api.errors.NotImplementedError` naming the local
    alternatives. A malformed URI raises ValueError.
    """
    match = _FUEL_URI.match(uri.strip())
    if match is None:
        raise ValueError(f"not a Fuel model URI: {uri!r} (expected https://fuel.gazebosim.org/1.0/<owner>/models/<name>)")
    server, owner, name = match["server"].lower(), match["owner"].lower(), match["name"].lower()
    for root in _fuel_cache_roots():
        folder = os.path.join(root, server, owner, "models", name)
        if not os.path.isdir(folder):
            continue
        versions = sorted((v for v in os.listdir(folder) if v.isdigit()), key=int, reverse=True)
        if match["version"] is not None:
            versions = [v for v in versions if v == match["version"]]
        for version in versions:
            try:
                return find_sdf_file(os.path.join(folder, version))
            except FileNotFoundError:
                continue
    raise errors.NotImplementedError(
        "get_model_file_from_fuel (download)",
        f"Fuel model {uri!r} is not in the local Fuel cache and nothing is downloaded: fetch it once "
        "(for example with 'gz fuel download'), or pass a local file, or use model:// with GZ_SIM_RESOURCE_PATH",
    )


def insert_plugin_to_gazebo_entity(gazebo_entity: Any, lib_name: Any, class_name: str = "", context: str = "") -> bool:
    """Attach a plugin to a world, model, link or joint handle: a Python callable (see the
    ``insert_*_plugin`` methods); a shared-library name raises NotImplementedError."""
    inserter = getattr(gazebo_entity, "_insert_plugin", None)
    if inserter is None:
        raise TypeError(f"{type(gazebo_entity).__name__} is not a world, model, link or joint handle")
    return inserter(lib_name, class_name, context)


def ToGazeboWorld(base: Any) -> Any:
    """ScenarIO's cast to the Gazebo class: handles here are already the full classes."""
    return base


def ToGazeboModel(base: Any) -> Any:
    """ScenarIO's cast to the Gazebo class: handles here are already the full classes."""
    return base


def ToGazeboLink(base: Any) -> Any:
    """ScenarIO's cast to the Gazebo class: handles here are already the full classes."""
    return base


def ToGazeboJoint(base: Any) -> Any:
    """ScenarIO's cast to the Gazebo class: handles here are already the full classes."""
    return base
