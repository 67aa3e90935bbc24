"""What touches the host: the paths the user granted (grants.py, paths.py), the files volume on a tmpfs,
run records (state.py), saved logs (savedlogs.py) and GPUs. Below the readers, the adapters and the
engine; above the model."""
