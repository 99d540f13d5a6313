"""Simulation: soft contacts (with the terrain, and between the links of a model), joint effects,
integrators, the step and rollouts (pure functions)."""

from .contacts import ContactParams, contact_forces
from .params import INTEGRATORS, SimulationParams
from .self_collision import SelfCollision
from .step import StepOutput, rollout, self_contacts, step
from .terrain import Terrain, penetration

__all__ = [
    "INTEGRATORS",
    "ContactParams",
    "SelfCollision",
    "SimulationParams",
    "StepOutput",
    "Terrain",
    "contact_forces",
    "penetration",
    "rollout",
    "self_contacts",
    "step",
]
