"""Tasks for learning: pure, jittable ``reset(key)`` / ``step(state, action)`` over the world step.

:class:`Task` (a pytree) and :class:`TaskState`; :class:`ActionMap` (torques, or position or
velocity targets through the world's PID controllers); :class:`Randomisation` (masses, friction,
terrain height drawn per episode, never recompiling); the shipped tasks
:func:`cart_pole_swing_up` and :func:`quadruped_walk`. The adapters live in
:mod:`jaxsim_like.tasks.brax_style` (no extra import) and :mod:`jaxsim_like.tasks.gym`
(imports gymnasium, the ``gym`` extra).
"""

from .actions import ActionMap
from .cart_pole import cart_pole_swing_up
from .quadruped import quadruped_walk
from .randomisation import Randomisation, Sample, apply, nominal_sample
from .task import Task, TaskFunctions, TaskState, tree_where

__all__ = [
    "ActionMap",
    "Randomisation",
    "Sample",
    "Task",
    "TaskFunctions",
    "TaskState",
    "apply",
    "cart_pole_swing_up",
    "nominal_sample",
    "quadruped_walk",
    "tree_where",
]
