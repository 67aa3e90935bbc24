"""One module per input form (plan, k8s, compose, helm, operator manifests through controllers/), the
dispatcher that picks one (dispatch.py) and the Secrets a run needs (secrets.py): files in, a JobModel out."""
