"""Whether a world file brings physics (ScenarIO's rule), and the step size it sets.

"By default, if the world file does not already contain a physics plugin, no physics is loaded
by default" (ScenarIO, ``World::setPhysicsEngine``), and "A physics plugin need to be part of the
simulation in order to make the time flow" (``World::time``). A ``<physics>`` element alone is a
profile, not the plugin: ScenarIO's empty world has one (``get_empty_world``: "the default DART
physics profile enabled") and "does not have the ground plane nor any physics".

The profile's ``<max_step_size>`` is the world's step size: a :class:`~.simulator.Simulator`
created without a ``step_size`` takes it from the first world file that sets one.
"""

from __future__ import annotations

import os

from ..parsers import find_sdf_file
from ..parsers.sdf_elements import is_physics_plugin
from ..parsers.xml import load_xml, looks_like_xml


def _worlds(source: str | os.PathLike) -> list:
    source = os.fspath(source)
    if not looks_like_xml(source) and not os.path.isfile(source):
        source = find_sdf_file(source)
    return list(load_xml(source).root.iter("world"))


def physics_plugins(source: str | os.PathLike) -> list[bool]:
    """For every ``<world>`` of an SDF path or string, in document order: whether it holds a
    physics plugin."""
    return [
        any(is_physics_plugin(plugin.get("filename", ""), plugin.get("name", "")) for plugin in world.findall("plugin"))
        for world in _worlds(source)
    ]


def physics_step_sizes(source: str | os.PathLike) -> list[float | None]:
    """For every ``<world>`` of an SDF path or string, in document order: the ``<max_step_size>``
    [s] of its physics profile (the ``<physics default="true">``, else the first), None without
    one (the parser checks the value)."""
    sizes: list[float | None] = []
    for world in _worlds(source):
        profiles = world.findall("physics")
        chosen = [p for p in profiles if (p.get("default") or "").strip() in ("true", "1")] or profiles
        element = chosen[0].find("max_step_size") if chosen else None
        sizes.append(float(element.text) if element is not None and (element.text or "").strip() else None)
    return sizes
