"""jaxsim_like: a differentiable, JAX-native rigid-body simulator for robotics."""

from . import dynamics
from .dynamics import Model, State, reduce
from .loading import ContactSampling, load_model, load_world
from .parsers.errors import ModelLoadError

__all__ = ["ContactSampling", "Model", "ModelLoadError", "State", "dynamics", "load_model", "load_world", "reduce"]
__version__ = "0.1.0"
