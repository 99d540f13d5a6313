"""The SDFormat elements the loader skips with a warning: ``<plugin>`` (not run here; Gazebo's
physics system excepted, see :func:`is_physics_plugin`) and
elements that no SDFormat version (1.4 to 1.12) defines under ``<sdf>``, ``<world>``,
``<model>``, ``<include>``, ``<link>`` or ``<joint>``, where misspelt ones would otherwise be
dropped unseen. One located :class:`~jaxsim_like.parsers.errors.ModelLoadWarning` per kind and
file, at the first one, with their count. Elements in an XML namespace are SDFormat's custom
elements (``<gz:...>``) and pass silently, as do the defined elements the loader does not use
(sensors, lights, ...; see :mod:`.sdf`).
"""

from __future__ import annotations

from lxml import etree

from .xml import warn_at

_WORLD = ("actor", "atmosphere", "audio", "frame", "gravity", "gui", "include", "joint", "light", "magnetic_field", "model",
          "physics", "plugin", "population", "road", "scene", "spherical_coordinates", "state", "wind")
_MODEL = ("allow_auto_disable", "enable_wind", "frame", "gripper", "include", "joint", "link", "model", "model_state", "plugin",
          "pose", "self_collide", "static")
_INCLUDE = ("model_state", "name", "namespace", "placement_frame", "plugin", "pose", "static", "uri")
_LINK = ("audio_sink", "audio_source", "battery", "collision", "enable_wind", "frame", "gravity", "inertial", "kinematic", "light",
         "must_be_base_link", "particle_emitter", "pose", "projector", "self_collide", "sensor", "velocity_decay", "visual")
_JOINT = ("axis", "axis2", "child", "frame", "gearbox_ratio", "gearbox_reference_body", "parent", "physics", "pose",
          "screw_thread_pitch", "sensor", "thread_pitch")
KNOWN_CHILDREN = {
    "sdf": ("actor", "light", "model", "world"),
    "world": _WORLD,
    "model": _MODEL,
    "include": _INCLUDE,
    "link": _LINK,
    "joint": _JOINT,
}
"""The children each checked element may have in some SDFormat version (from the specification's
element files of versions 1.4 to 1.12)."""


def is_physics_plugin(filename: str, name: str) -> bool:
    """Whether ``<plugin filename=... name=...>`` loads Gazebo's physics system
    (``gz-sim-physics-system`` / ``gz::sim::systems::Physics``, or their ignition names): what it
    does, stepping the physics, is what a simulation here always does, so it is not warned about."""
    return "physics-system" in filename.lower() or name.strip().endswith("systems::Physics")


def warn_ignored(root: etree._Element, file: str | None) -> None:
    """Warn once per kind about the plugins and the unknown elements under ``root`` (an
    ``<sdf>``, ``<world>`` or ``<model>`` of ``file``)."""
    found: dict[tuple[str, str], list[etree._Element]] = {}
    stack = [root]
    while stack:
        element = stack.pop()
        known = KNOWN_CHILDREN.get(element.tag)
        if known is None:
            continue
        for item in element:
            if not isinstance(item.tag, str) or etree.QName(item).namespace is not None:
                continue
            if item.tag == "plugin":
                if not is_physics_plugin(item.get("filename", ""), item.get("name", "")):
                    found.setdefault(("", "plugin"), []).append(item)
            elif item.tag not in known:
                found.setdefault((element.tag, item.tag), []).append(item)
            else:
                stack.append(item)
    firsts = {key: min(items, key=lambda item: item.sourceline or 0) for key, items in found.items()}
    for (parent, tag), first in sorted(firsts.items(), key=lambda entry: entry[1].sourceline or 0):
        count = len(found[parent, tag])
        times = f" ({count} in this file)" if count > 1 else ""
        if tag == "plugin":
            warn_at(first, file, f"plugins are not run: <plugin> ignored{times}")
        else:
            warn_at(first, file, f"<{tag}> is not an SDFormat element of <{parent}>: ignored{times}")
