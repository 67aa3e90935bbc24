"""Container-engine adapters, the only modules that import docker or requests (a contract in pyproject.toml):
choice.py picks the engine (options, environment, sockets), base.py is the interface the engine layer
sees, docker_engine.py drives Docker (and holds the Docker-API operations both engines serve),
podman_engine.py drives Podman through its Docker-compatible socket, engines.py connects, and
docker_events.py follows an engine's event stream."""
