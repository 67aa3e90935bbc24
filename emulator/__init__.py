"""Local emulator: runs a spec, any target's compiled output (k8s, kubeflow, volcano, jobset,
trainjob, a Helm chart) or a compose file on one machine, on Docker or Podman, as the operators would.

Import-cheap on purpose: nothing here imports `docker` at module level (only emulator/adapters/
talks to an engine client, and only once a command reaches an engine), and the CLI imports
trainspec.emulator.commands only for the emulator's own commands, so the compile path never pays for it.
"""
