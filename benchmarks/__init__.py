"""Benchmarks of jaxsim_like against jaxsim and Pinocchio; run the scripts from the repository root."""
