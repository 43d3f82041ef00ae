"""Kubernetes in and out: ``kepcheck import`` (a kubectl snapshot to a scenario) and ``kepcheck
export`` (a trace to manifests, kubectl steps and a Go test case)."""
