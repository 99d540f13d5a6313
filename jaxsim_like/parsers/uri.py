"""Resolution of ``package://``, ``model://``, ``file://`` URIs and relative paths to files on disk."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

_PACKAGE_VARIABLES = ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")
_MODEL_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "SDF_PATH", "IGN_GAZEBO_RESOURCE_PATH", "GAZEBO_MODEL_PATH")


def _search_path(variables: tuple[str, ...]) -> list[str]:
    folders: list[str] = []
    for variable in variables:
        for folder in os.environ.get(variable, "").split(os.pathsep):
            if folder and folder not in folders:
                folders.append(folder)
    return folders


def _package_candidates(folder: str, package: str, rest: str) -> list[str]:
    # A ROS 1 package folder, an ament prefix (share/<package>), or a folder that holds it.
    return [
        os.path.join(folder, package, rest),
        os.path.join(folder, "share", package, rest),
        os.path.join(os.path.dirname(folder), package, rest),
    ]


def resolve_uri(uri: str, base_directory: str | None = None) -> str | None:
    """The absolute path of an existing file or folder named by ``uri``, or None.

    ``package://pkg/rest`` is looked up in ROS_PACKAGE_PATH and AMENT_PREFIX_PATH (and, as
    robot descriptions often ship, in the folders above ``base_directory``);
    ``model://name/rest`` in GZ_SIM_RESOURCE_PATH, SDF_PATH, IGN_GAZEBO_RESOURCE_PATH and
    GAZEBO_MODEL_PATH (and next to ``base_directory``); ``file://`` and plain paths are
    taken relative to ``base_directory``.
    """
    base = base_directory or os.getcwd()
    parsed = urlparse(uri)
    scheme = parsed.scheme.lower()
    if scheme in ("package", "model"):
        head = unquote(parsed.netloc)
        rest = unquote(parsed.path).lstrip("/")
        variables = _PACKAGE_VARIABLES if scheme == "package" else _MODEL_VARIABLES
        candidates: list[str] = []
        for folder in _search_path(variables):
            candidates += _package_candidates(folder, head, rest)
        ancestor = os.path.abspath(base)
        while True:
            candidates.append(os.path.join(ancestor, head, rest))
            if os.path.basename(ancestor) == head:
                candidates.append(os.path.join(ancestor, rest))
            parent = os.path.dirname(ancestor)
            if parent == ancestor:
                break
            ancestor = parent
    elif scheme == "file":
        path = unquote(parsed.netloc + parsed.path)
        candidates = [path if os.path.isabs(path) else os.path.join(base, path)]
    elif scheme == "":
        candidates = [uri if os.path.isabs(uri) else os.path.join(base, uri)]
    else:
        return None
    for candidate in candidates:
        if os.path.exists(candidate):
            return os.path.abspath(candidate)
    return None


def model_search_path() -> list[str]:
    """The folders searched for ``model://`` URIs, in order (GZ_SIM_RESOURCE_PATH first)."""
    return _search_path(_MODEL_VARIABLES)
