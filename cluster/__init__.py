"""`trainspec apply | ps --cluster | logs --cluster | down --cluster`: putting a job on a cluster.

Every decision (which objects, in what order, what to prune, how a status reads as replicas,
how a server error maps back to the spec) is a pure function in this package; only
`client.py` talks to the API server, and only it imports the `kubernetes` client.
"""
