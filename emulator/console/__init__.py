"""What the user sees: the replica table and notes (table.py), saved logs (logview.py), live log streams
(logstream.py)."""
