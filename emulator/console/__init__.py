"""What the user sees, above the engine: the replica table, notes, log lines and the summary
(table.py's Console, the engine's Reporter), and `trainspec logs` over the saved logs (logview.py)."""
