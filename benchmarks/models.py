"""The URDF files the benchmarks run on."""

from __future__ import annotations

from pathlib import Path

import icub_models

REPOSITORY = Path(__file__).resolve().parents[1]
CHOICES = ("humanoid", "icub", "all")


def model_paths(choice: str = "all") -> dict[str, Path]:
    """Name -> URDF path for `choice` (one of CHOICES); the humanoid ships with jaxsim_like."""
    paths = {
        "humanoid": REPOSITORY / "jaxsim_like" / "models" / "humanoid" / "humanoid.urdf",
        "icub": Path(icub_models.get_model_file("iCubGazeboV2_5")),
    }
    return paths if choice == "all" else {choice: paths[choice]}
