"""What a job is once read: the run model (job.py), replica status and its table row (status.py), the
success/failure policy, ports, security fields, secret masking and names. Imports nothing else of the
emulator."""
