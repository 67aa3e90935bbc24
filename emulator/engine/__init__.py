"""Running a JobModel: run.py (one run), pods.py (the kubelet of one replica), containers, restarts,
start order, probes, the Job controller's counts, preflight. Talks to the container engine only through
adapters/ and catches only the adapter's failure names."""
