"""Emulator start and stop vs docker-compose, same image, same run.

  python bench/emulator_startstop.py [--sizes 8,32] [--repeat 3] [--image trainspec-test:py3]

For N replicas of a small job (every replica sleeps):
- trainspec: `trainspec run job.yaml --detach` until every replica is running, then `trainspec down`.
- compose:   `docker-compose -f compose.yaml up -d` (Debian's docker-compose) on the compose file
             trainspec compiled for the same spec, then `docker-compose down -t 0`.
Goal: trainspec at most 0.5x compose for both. Needs a Docker engine and the test image
(`bash scripts/start-dockerd.sh && bash scripts/build-test-image.sh`).
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


def timed(cmd: list[str], cwd: str, env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="8,32")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--image", default="trainspec-test:py3")
    args = parser.parse_args()
    compose = shutil.which("docker-compose")
    if not compose:
        print("docker-compose is not installed (apt-get install docker-compose)")
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            folder = Path(tmp) / f"n{n}"
            folder.mkdir()
            (folder / "job.yaml").write_text(SPEC.format(n=n, image=args.image, workers=n - 1))
            subprocess.run([sys.executable, "-m", "trainspec", "compile", "job.yaml", "--target", "compose", "-o",
                            "compose.yaml"], cwd=folder, check=True)
            samples: dict[str, list[float]] = {"ts_up": [], "ts_down": [], "dc_up": [], "dc_down": []}
            job = f"bench{n}"
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "trainspec", "run", "job.yaml", "--detach", "-q"], cwd=folder,
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                wait_until(lambda: running(job) == n)
                samples["ts_up"].append(time.perf_counter() - start)
                samples["ts_down"].append(timed([sys.executable, "-m", "trainspec", "down", job], str(folder)))
                assert running(job) == 0

                project = f"bench{n}dc"
                start = time.perf_counter()
                subprocess.run([compose, "-p", project, "-f", "compose.yaml", "up", "-d"], cwd=folder, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                wait_until(lambda: compose_running(project) == n)
                samples["dc_up"].append(time.perf_counter() - start)
                samples["dc_down"].append(timed([compose, "-p", project, "-f", "compose.yaml", "down", "-t", "0"],
                                                str(folder)))
            med = {k: statistics.median(v) for k, v in samples.items()}
            rows.append([n, "start", f"{med['ts_up']:.2f}", f"{med['dc_up']:.2f}", f"{med['ts_up'] / med['dc_up']:.2f}x"])
            rows.append([n, "stop", f"{med['ts_down']:.2f}", f"{med['dc_down']:.2f}",
                         f"{med['ts_down'] / med['dc_down']:.2f}x"])
    print(f"# Emulator start/stop vs docker-compose — {machine()}\n")
    print(table(["replicas", "phase", "trainspec s", "docker-compose s", "ratio"], rows))
    ok = all(float(r[4][:-1]) <= 0.5 for r in rows)
    print(f"\ngoal: trainspec at most 0.5x docker-compose for start and stop: {'met' if ok else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
