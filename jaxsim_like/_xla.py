"""Default XLA settings for the CPU, applied when the package is imported.

Rigid-body dynamics are many tiny matrix products: handing each to Eigen's thread pool, or
scheduling independent kernels on other threads, costs more than the products themselves (and
can deadlock XLA's CPU thread pool on two cores). These flags keep them on the calling thread,
and generate the kernels with XLA's elemental emitters rather than its newer fusion emitters,
which halves the compile time of these graphs of many small fusions (ABA on the iCub:
1.05 -> 0.60 s) at no cost at run time. They are appended to ``XLA_FLAGS`` unless that variable
already sets them.

Single-device CPU computations also run synchronously, on the calling thread
(``jax_cpu_enable_async_dispatch`` off): a step takes tens of microseconds, and handing it to a
dispatch thread and waiting for it cost as much again.

XLA's CPU runtime runs a program as a graph of kernels and, where several are ready at once,
hands some to its intra-op thread pool (one thread per core). A step's kernels take well under a
microsecond each, so every hand-off (waking a worker, stealing, waiting for it) costs more than
it saves, in CPU and in wall time, most on a busy machine: the pool is sized to one
thread (``PJRT_NPROC=1``, read by XLA's CPU client when it starts) unless the user set
``PJRT_NPROC`` or ``NPROC``, or asked for several CPU devices
(``--xla_force_host_platform_device_count``; left as XLA sizes it there). Batches still use
every core: :func:`.batching.simulate_batch` runs its slices from threads of its own.

These only take effect if no JAX computation ran before the import.

On Linux with glibc, blocks of up to :data:`HEAP_THRESHOLD` are also served from malloc's heap,
which keeps as much freed memory (:func:`keep_freed_memory`): by default glibc maps each block
above 32 MiB afresh and returns it when freed, and a batched step's temporaries (tens of
megabytes for a thousand worlds) were then mapped, page-faulted and zeroed again at every call.
The process keeps its peak of such memory instead of returning it to the system.

Set ``JAXSIM_LIKE_KEEP_XLA_FLAGS=1`` to opt out of all four.
"""

from __future__ import annotations

import ctypes
import os
import sys

import jax

CPU_FLAGS = {
    "--xla_cpu_multi_thread_eigen": "false",
    "--xla_cpu_enable_concurrency_optimized_scheduler": "false",
    "--xla_cpu_use_fusion_emitters": "false",
}


CPU_POOL = ("PJRT_NPROC", "1")
"""The environment variable that sizes XLA's CPU intra-op thread pool, and the size set on import."""
_POOL_SETTINGS = ("PJRT_NPROC", "NPROC")


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
    dispatch synchronous, size XLA's CPU thread pool (:data:`CPU_POOL`, see the module doc) and
    keep freed memory in malloc's heap (:func:`keep_freed_memory`)."""
    if os.environ.get("JAXSIM_LIKE_KEEP_XLA_FLAGS"):
        return
    keep_freed_memory()
    flags = os.environ.get("XLA_FLAGS", "")
    missing = [f"{name}={value}" for name, value in CPU_FLAGS.items() if name not in flags]
    if missing:
        os.environ["XLA_FLAGS"] = " ".join(filter(None, [flags, *missing]))
    if not any(name in os.environ for name in _POOL_SETTINGS) and "xla_force_host_platform_device_count" not in flags:
        os.environ[CPU_POOL[0]] = CPU_POOL[1]
    jax.config.update("jax_cpu_enable_async_dispatch", False)
