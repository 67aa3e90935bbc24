"""Running a JobModel: run.py (one run), pods.py (the kubelet of one replica), logpump.py, events.py (the
run's event stream), containers, restarts, start order, probes, the Job controller's counts, preflight.
Talks to the container engine only through the adapter interface (adapters/base.py: a ContainerSpec to
create, every other call a method; the adapters are imported when it connects) and catches only its
EngineError; tells what happens through reporter.py's Reporter, which the console above implements."""
