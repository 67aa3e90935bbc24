"""Markers of the emulator's own tests (the Docker fixtures are in tests/conftest.py)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "docker_daemon: starts, kills and restarts a private dockerd of its own "
                                       "(never the shared one); deselect with -m 'not docker_daemon'")
    config.addinivalue_line("markers", "slow: takes minutes (e.g. a million log lines); deselect with -m 'not slow'")
