"""Running a JobModel: run.py (one run), pods.py (the kubelet of one replica), logpump.py, containers,
restarts, start order, probes, the Job controller's counts, preflight. Talks to the container engine only
through adapters/ (imported when it connects) and catches only the adapter's failure names; tells what
happens through reporter.py's Reporter, which the console above implements."""
