"""Kubernetes API facts the scenario language and the model rely on: quantities, validation, the
KEP-753 pod-resources formula and QoS classes."""
