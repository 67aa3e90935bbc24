"""Local emulator: runs compiled trainspec output (k8s or compose) on Docker.

Import-cheap on purpose: nothing here imports `docker` at module level, so the
compile path (which imports trainspec.emulator.commands to register subcommands)
never pays for it.
"""
