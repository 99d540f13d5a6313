"""Peer libraries measured alongside jaxsim_like."""

from __future__ import annotations

import shutil
from types import ModuleType


def import_jaxsim_peer() -> tuple[ModuleType | None, str | None]:
    """The jaxsim peer module, or None and why it cannot be used (jaxsim missing, no `ign`/`gz`)."""
    if shutil.which("gz") is None and shutil.which("ign") is None:
        return None, "jaxsim skipped: neither `gz` nor `ign` on PATH (apt-get install ignition-tools libsdformat-dev)"
    try:
        from benchmarks.peers import jaxsim_peer
    except ImportError as error:
        return None, f"jaxsim skipped: {error}"
    return jaxsim_peer, None
