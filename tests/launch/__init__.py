"""Tests of lshsim.launch (run directories, the local, Dask and SLURM launchers, their flags)."""
