"""How every public method of the object API is called: in float64, with ScenarIO's return values.

:func:`scenario_methods` wraps the public methods of a class so that

- each runs with JAX in 64-bit mode (``jax.enable_x64``), whatever the user's global setting:
  the worlds' arrays are float64 and their jitted functions are compiled and called in float64,
  while the user's own functional code keeps its dtype (the switch is thread-local and undone on
  return; entering it is cheap, and free when x64 is already on);
- a method annotated ``-> bool`` (ScenarIO: "Returns: True for success, false otherwise")
  reports a failure by returning False and logging the reason on the ``jaxsim_like.api``
  logger at ERROR level, as ScenarIO prints its errors. The exceptions the references name
  still propagate: :class:`~.errors.LinkNotFound`, :class:`~.errors.JointNotFound`,
  :class:`~.errors.ModelNotFound`, :class:`~.errors.DOFIndexError` ("std::runtime_error if the
  DOF is not valid") and :class:`~.errors.NotImplementedError`, as do programming errors
  (TypeError and the like).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import jax

from . import errors
from .utils import log

# What a "True for success, false otherwise" method turns into False (the named exceptions are
# re-raised first).
FAILURES = (
    ValueError,  # ModelLoadError (an invalid description) included
    FileNotFoundError,
    errors.DOFMismatch,
    errors.LinkError,
    errors.JointError,
    errors.ModelError,
    errors.WorldError,
    errors.SimulatorError,
)
RAISED = (errors.DOFIndexError, errors.LinkNotFound, errors.JointNotFound, errors.ModelNotFound, errors.NotImplementedError)

T = TypeVar("T")


def in_double(function: Callable[..., T]) -> Callable[..., T]:
    """``function`` run with JAX in 64-bit mode (a no-op when it is already on)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        if jax.config.jax_enable_x64:
            return function(*args, **kwargs)
        with jax.enable_x64(True):
            return function(*args, **kwargs)

    return wrapper


def reporting_failures(function: Callable[..., bool], owner: str) -> Callable[..., bool]:
    """``function`` returning False, with a logged error, where it raises one of :data:`FAILURES`."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> bool:
        try:
            return function(*args, **kwargs)
        except RAISED:
            raise
        except FAILURES as error:
            log.error("%s.%s failed: %s", owner, function.__name__, error)
            return False

    return wrapper


def scenario_methods(cls: type) -> type:
    """Wrap the public methods defined in ``cls`` (see the module docstring)."""
    for name, attribute in list(vars(cls).items()):
        if name.startswith("_") or not inspect.isfunction(attribute):
            continue
        wrapped = attribute
        if attribute.__annotations__.get("return") in ("bool", bool):
            wrapped = reporting_failures(wrapped, cls.__name__)
        setattr(cls, name, in_double(wrapped))
    return cls
