"""jaxsim_like: a differentiable, JAX-native rigid-body simulator for robotics."""

from ._xla import apply_cpu_defaults

apply_cpu_defaults()

from . import dynamics, models, scenes, simulation  # noqa: E402
from .dynamics import Model, State, reduce
from .loading import ContactSampling, load_model, load_world
from .parsers.errors import ModelLoadError, ModelLoadWarning
from .simulation import ContactParams, SimulationParams, StepOutput, Terrain, rollout, step

__all__ = [
    "ContactParams",
    "ContactSampling",
    "Model",
    "ModelLoadError",
    "ModelLoadWarning",
    "SimulationParams",
    "State",
    "StepOutput",
    "Terrain",
    "dynamics",
    "load_model",
    "load_world",
    "models",
    "reduce",
    "rollout",
    "scenes",
    "simulation",
    "step",
]
__version__ = "0.1.0"
