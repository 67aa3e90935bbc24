"""Container-engine adapters, the only modules that import docker or requests (contracts in pyproject.toml):
base.py is the one seam the modules above see (ContainerSpec, the ContainerEngine interface, EngineError),
choice.py picks the engine (options, environment, sockets), engines.py connects, docker_api.py is the
Docker API both engines serve (the shared implementation), docker_engine.py (Docker) and
podman_engine.py (Podman) are sibling adapters over it."""
