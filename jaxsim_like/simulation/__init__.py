"""Simulation: soft contacts (with the terrain, and between the links of a model), joint effects,
integrators, the step and rollouts (pure functions)."""

from .contacts import ContactParams, contact_forces
from . import control, wrenches
from .params import INTEGRATORS, ModelParams, SimulationParams, WorldParams
from .self_collision import SelfCollision
from .model_step import StepOutput, self_contacts
from .step import rollout, step
from .terrain import Terrain, penetration

__all__ = [
    "INTEGRATORS",
    "ContactParams",
    "SelfCollision",
    "ModelParams",
    "SimulationParams",
    "WorldParams",
    "StepOutput",
    "Terrain",
    "contact_forces",
    "control",
    "penetration",
    "rollout",
    "self_contacts",
    "step",
    "wrenches",
]
