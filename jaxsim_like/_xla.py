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

Both only take effect if no JAX computation ran before the import. Set
``JAXSIM_LIKE_KEEP_XLA_FLAGS=1`` to opt out of both.
"""

from __future__ import annotations

import os

import jax

CPU_FLAGS = {
    "--xla_cpu_multi_thread_eigen": "false",
    "--xla_cpu_enable_concurrency_optimized_scheduler": "false",
    "--xla_cpu_use_fusion_emitters": "false",
}


def apply_cpu_defaults() -> None:
    """Append :data:`CPU_FLAGS` to ``XLA_FLAGS`` where the user has not set them, and make CPU
    dispatch synchronous."""
    if os.environ.get("JAXSIM_LIKE_KEEP_XLA_FLAGS"):
        return
    flags = os.environ.get("XLA_FLAGS", "")
    missing = [f"{name}={value}" for name, value in CPU_FLAGS.items() if name not in flags]
    if missing:
        os.environ["XLA_FLAGS"] = " ".join(filter(None, [flags, *missing]))
    jax.config.update("jax_cpu_enable_async_dispatch", False)
