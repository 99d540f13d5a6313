"""Robot descriptions shipped with jaxsim_like, for the demo and quick experiments.

Each model lives in ``models/<name>/<name>.urdf`` and ``<name>.sdf`` (the humanoid also has
``humanoid.srdf``); the files are written by ``tests/assets/generate.py``, whose specifications
give every dimension and mass. Example: ``jaxsim_like.load_model(models.path("quadruped"))``.
"""

from __future__ import annotations

import os

FORMATS = ("urdf", "sdf", "srdf")

_FOLDER = os.path.dirname(os.path.abspath(__file__))


def available() -> list[str]:
    """The names of the shipped models, sorted."""
    return sorted(
        entry for entry in os.listdir(_FOLDER) if os.path.isfile(os.path.join(_FOLDER, entry, f"{entry}.urdf"))
    )


def path(name: str, format: str = "urdf") -> str:
    """The absolute path of model ``name`` in ``format`` (``"urdf"``, ``"sdf"`` or ``"srdf"``).

    Raises ValueError naming the available models (or formats) when there is no such file.
    """
    names = available()
    if name not in names:
        raise ValueError(f"no shipped model named {name!r}; available models: {', '.join(names)}")
    extension = format.lower()
    if extension not in FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of: {', '.join(FORMATS)}")
    file = os.path.join(_FOLDER, name, f"{name}.{extension}")
    if not os.path.isfile(file):
        present = [option for option in FORMATS if os.path.isfile(os.path.join(_FOLDER, name, f"{name}.{option}"))]
        raise ValueError(f"model {name!r} has no {extension} description; it has: {', '.join(present)}")
    return file
