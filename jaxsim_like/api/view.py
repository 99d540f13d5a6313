"""The 3D view of a world for :meth:`Simulator.gui`: its models as they are now, in one HTML file."""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import webbrowser

from ..dynamics.state import State
from ..viewer import world_html
from .world import World

GUI_FILE_VARIABLE = "JAXSIM_LIKE_GUI_FILE"


def world_page(world: World) -> str:
    """The HTML view of every model of ``world`` in its current state (pending resets applied)."""
    models = []
    for entry in world._entries.values():
        state = State.build(
            entry.model,
            base_position=entry.state("base_position"),
            base_quaternion=entry.state("base_quaternion"),
            joint_positions=entry.current_configuration(),
        )
        models.append((entry.model, entry.description, state))
    return world_html(models, time=world.time(), title=f"world '{world.name()}' at t = {world.time():.3f} s")


def gui_path(world: World) -> pathlib.Path:
    """Where the view is written: ``$JAXSIM_LIKE_GUI_FILE``, else ``<temp dir>/jaxsim_like_<world>.html``."""
    chosen = os.environ.get(GUI_FILE_VARIABLE)
    return pathlib.Path(chosen) if chosen else pathlib.Path(tempfile.gettempdir()) / f"jaxsim_like_{world.name()}.html"


def has_display() -> bool:
    """Whether a browser window can be opened (macOS, Windows, or an X11 / Wayland display)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def show(world: World) -> pathlib.Path:
    """Write the view of ``world`` and open it in the web browser, or say where it is without a display."""
    path = gui_path(world)
    path.write_text(world_page(world), encoding="utf-8")
    if not (has_display() and webbrowser.open(path.resolve().as_uri())):
        print(f"jaxsim_like: the 3D view of world '{world.name()}' is in {path} (open it in a web browser)", file=sys.stderr)
    return path
