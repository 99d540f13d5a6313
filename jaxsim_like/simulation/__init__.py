"""Simulation: soft contacts (with the terrain, and between the links of a model), joint effects,
integrators, the step and rollouts (pure functions)."""

from .contacts import ContactParams, contact_forces
from . import control, wrenches
from .params import INTEGRATORS, ModelParams, SimulationParams, WorldParams
from .model_step import StepOutput
from .step import pair_memory, rollout, step
from .terrain import Terrain, penetration

__all__ = [
    "INTEGRATORS",
    "ContactParams",
    "ModelParams",
    "SimulationParams",
    "WorldParams",
    "StepOutput",
    "Terrain",
    "contact_forces",
    "control",
    "pair_memory",
    "penetration",
    "rollout",
    "step",
    "wrenches",
]
