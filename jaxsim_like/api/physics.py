"""Whether a world file brings physics: ScenarIO's rule.

"By default, if the world file does not already contain a physics plugin, no physics is loaded
by default" (ScenarIO, ``World::setPhysicsEngine``), and "A physics plugin need to be part of the
simulation in order to make the time flow" (``World::time``). A ``<physics>`` element alone is a
profile, not the plugin: ScenarIO's empty world has one (``get_empty_world``: "the default DART
physics profile enabled") and "does not have the ground plane nor any physics".
"""

from __future__ import annotations

import os

from ..parsers import find_sdf_file
from ..parsers.xml import load_xml, looks_like_xml


def is_physics_plugin(filename: str, name: str) -> bool:
    """Whether ``<plugin filename=... name=...>`` loads Gazebo's physics system
    (``gz-sim-physics-system`` / ``gz::sim::systems::Physics``, or their ignition names)."""
    return "physics-system" in filename.lower() or name.strip().endswith("systems::Physics")


def physics_plugins(source: str | os.PathLike) -> list[bool]:
    """For every ``<world>`` of an SDF path or string, in document order: whether it holds a
    physics plugin."""
    source = os.fspath(source)
    if not looks_like_xml(source) and not os.path.isfile(source):
        source = find_sdf_file(source)
    root = load_xml(source).root
    return [
        any(is_physics_plugin(plugin.get("filename", ""), plugin.get("name", "")) for plugin in world.findall("plugin"))
        for world in root.iter("world")
    ]
