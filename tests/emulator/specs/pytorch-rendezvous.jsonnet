// PyTorch env check without torch: the master listens on MASTER_PORT, every
// worker connects to MASTER_ADDR and sends its RANK; the master checks it got
// ranks 1..WORLD_SIZE-1. A Jsonnet spec, so `run` also passes --tla through.
function(workers="2") {
  apiVersion: "trainspec/v1",
  kind: "TrainingJob",
  metadata: { name: "ptcheck" },
  spec: {
    framework: "pytorch",
    image: "trainspec-test:py3",
    command: ["python3", "-c", |||
      import os, socket, sys, time
      rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
      addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
      assert addr == "ptcheck-master-0" and os.environ["PYTHONUNBUFFERED"] == "1"
      print(f"rank {rank} of {world}, master {addr}:{port}", flush=True)
      if rank == 0:
          srv = socket.create_server(("", port))
          srv.settimeout(60)
          seen = set()
          while len(seen) < world - 1:
              conn, _ = srv.accept()
              seen.add(int(conn.recv(16).decode()))
              conn.close()
          assert seen == set(range(1, world)), seen
          print(f"master heard ranks {sorted(seen)}", flush=True)
      else:
          for _ in range(200):
              try:
                  with socket.create_connection((addr, port), timeout=2) as s:
                      s.sendall(str(rank).encode())
                  break
              except OSError:
                  time.sleep(0.1)
          else:
              sys.exit("cannot reach the master")
    |||],
    restartPolicy: "OnFailure",
    roles: { master: { replicas: 1 }, worker: { replicas: std.parseInt(workers) } },
  },
}
