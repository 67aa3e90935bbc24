"""What a job is once read: the run model (job.py), replica status (status.py), the success/failure
policy, ports, security fields and names. Imports nothing else of the emulator."""
