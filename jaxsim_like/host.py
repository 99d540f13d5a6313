"""Arrays built on the host and copied to the device without compiling anything.

Outside a trace, JAX runs each ``jax.numpy`` operation as a small XLA program compiled for its
shapes and dtypes: ``jnp.zeros`` (``broadcast_in_dim``) and ``jnp.asarray`` of a numpy array
(``stage``) too. Values built once per model or world (parameters, initial states) have a new
shape for every model, so each build compiled a few such programs. ``jax.device_put`` of a numpy
array copies it with the same dtype canonicalisation (float64 stays float64 with JAX's 64-bit
types on, becomes float32 with them off), neither weakly typed nor committed to a device, as
``jnp.asarray`` makes it, and compiles nothing.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def to_device(values: np.ndarray) -> jax.Array:
    """``jnp.asarray(values)`` of a numpy array (concrete), copied without compiling."""
    return jax.device_put(np.asarray(values))


def zeros(shape: int | tuple[int, ...], dtype: Any) -> jax.Array:
    """``jnp.zeros(shape, dtype)`` for a ``dtype`` JAX can hold (float32 with 64-bit types off),
    without compiling."""
    return jax.device_put(np.zeros(shape, dtype))
