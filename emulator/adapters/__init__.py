"""Container-engine adapters: docker_engine.py (the Docker SDK) and docker_events.py (its event stream).
The only modules that import docker or requests (a contract in pyproject.toml); a Podman adapter goes here."""
