"""Default XLA settings for the CPU, applied when the package is imported.

Rigid-body dynamics are many tiny matrix products: handing each to Eigen's thread pool, or
scheduling independent kernels on other threads, costs more than the products themselves (and
can deadlock XLA's CPU thread pool on two cores). These flags keep them on the calling thread,
and generate the kernels with XLA's elemental emitters rather than its newer fusion emitters,
which halves the compile time of these graphs of many small fusions (ABA on the iCub:
1.05 -> 0.60 s) at no cost at run time. From jaxlib 0.9 on, XLA also hands some fusions (batched
dots, elementwise chains) to YNNPACK: on these small arrays a YNNPACK call cost up to 140 us where
XLA's own kernel takes a few (without them: the pile's step in float64 0.86-0.93x, the
humanoid's batched step in float32 0.86-0.89x), so the list of YNNPACK fusions is set empty
(:data:`YNN_FLAG`; not with older jaxlibs, which do not know the flag: XLA stops on a flag it does
not know). The flags are appended to ``XLA_FLAGS`` unless that variable already sets them.

Single-device CPU computations also run synchronously, on the calling thread
(``jax_cpu_enable_async_dispatch`` off): a step takes tens of microseconds, and handing it to a
dispatch thread and waiting for it cost as much again.

Both only take effect if no JAX computation ran before the import.

On Linux with glibc, blocks of up to :data:`HEAP_THRESHOLD` are also served from malloc's heap,
which keeps as much freed memory (:func:`keep_freed_memory`): by default glibc maps each block
above 32 MiB afresh and returns it when freed, and a batched step's temporaries (tens of
megabytes for a thousand worlds) were then mapped, page-faulted and zeroed again at every call.
The process keeps its peak of such memory instead of returning it to the system.

Set ``JAXSIM_LIKE_KEEP_XLA_FLAGS=1`` to opt out of all three.
"""

from __future__ import annotations

import ctypes
import os
import sys

import jax

YNN_FLAG = "--xla_cpu_experimental_ynn_fusion_type"
"""The kinds of fusion XLA hands to YNNPACK (jaxlib 0.9 and later): set to none."""
YNN_SINCE = (0, 9)


def _jaxlib_version() -> tuple[int, ...]:
    """The installed jaxlib's major and minor version."""
    from jaxlib.version import __version__

    return tuple(int(part) for part in __version__.split(".")[:2] if part.isdigit())


CPU_FLAGS = {
    "--xla_cpu_multi_thread_eigen": "false",
    "--xla_cpu_enable_concurrency_optimized_scheduler": "false",
    "--xla_cpu_use_fusion_emitters": "false",
    **({YNN_FLAG: ""} if _jaxlib_version() >= YNN_SINCE else {}),
}


HEAP_THRESHOLD = 1 << 30
"""[bytes] glibc's mmap and trim thresholds set on import (:func:`keep_freed_memory`)."""
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # the mallopt parameters of glibc's malloc.h
_MALLOC_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "malloc.mmap_threshold", "malloc.trim_threshold")


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds to :data:`HEAP_THRESHOLD`: blocks up to that size come
    from malloc's heap, and freed memory up to that amount stays in it, so that a large block
    freed and allocated again (XLA's temporaries, call after call) is not mapped and zeroed anew.
    Returns whether they were set: not off Linux, without glibc, or where the user set either
    threshold (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``GLIBC_TUNABLES``)."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if not sys.platform.startswith("linux") or any(name in os.environ or name in tunables for name in _MALLOC_SETTINGS):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, HEAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, HEAP_THRESHOLD))


def apply_cpu_defaults() -> None:
    """Append :data:`CPU_FLAGS` to ``XLA_FLAGS`` where the user has not set them, make CPU
    dispatch synchronous and keep freed memory in malloc's heap (:func:`keep_freed_memory`)."""
    if os.environ.get("JAXSIM_LIKE_KEEP_XLA_FLAGS"):
        return
    keep_freed_memory()
    flags = os.environ.get("XLA_FLAGS", "")
    missing = [f"{name}={value}" for name, value in CPU_FLAGS.items() if name not in flags]
    if missing:
        os.environ["XLA_FLAGS"] = " ".join(filter(None, [flags, *missing]))
    jax.config.update("jax_cpu_enable_async_dispatch", False)
