"""JAX's persistent compilation cache for the command line, and a count of what was compiled.

A second run of the same model reads its executables from the cache folder instead of
compiling them (``JAXSIM_LIKE_CACHE_DIR``, default ``$XDG_CACHE_HOME/jaxsim_like/jax`` or
``~/.cache/jaxsim_like/jax``). :class:`CompileLog` counts JAX's monitoring events: the
executables built and those read from the cache.
"""

from __future__ import annotations

import os
import threading

import jax
from jax import monitoring

_BACKEND = "/jax/core/compile/backend_compile_duration"
_HIT = "/jax/compilation_cache/cache_hits"


def default_cache_dir() -> str:
    """``JAXSIM_LIKE_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxsim_like/jax`` (``~/.cache`` by default)."""
    if os.environ.get("JAXSIM_LIKE_CACHE_DIR"):
        return os.environ["JAXSIM_LIKE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxsim_like", "jax")


def enable_persistent_cache(folder: str | None = None) -> str | None:
    """Cache every compiled executable in ``folder`` (default :func:`default_cache_dir`), however
    small or quick to compile; keeps a folder the user set (``JAX_COMPILATION_CACHE_DIR``).
    Returns the folder, or None when it cannot be created (then nothing is cached)."""
    folder = jax.config.jax_compilation_cache_dir or folder or default_cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


class CompileLog:
    """Counts, from the moment it is built, the executables JAX built (compiled or read from the
    persistent cache) and those read from the cache."""

    def __init__(self) -> None:
        self.executables = 0
        self.from_cache = 0
        self._lock = threading.Lock()
        self._active = True
        monitoring.register_event_listener(self._event)
        monitoring.register_event_duration_secs_listener(self._duration)

    @property
    def compiled(self) -> int:
        """Executables compiled from scratch (built and not read from the cache)."""
        return self.executables - self.from_cache

    def _event(self, event: str, **_: object) -> None:
        if self._active and event == _HIT:
            with self._lock:
                self.from_cache += 1

    def _duration(self, event: str, seconds: float, **_: object) -> None:
        if self._active and event == _BACKEND:
            with self._lock:
                self.executables += 1

    def close(self) -> None:
        """Stop counting (JAX keeps listeners registered; a closed log ignores them)."""
        self._active = False
