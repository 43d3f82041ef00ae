"""Resource accounting: how much of a node each pod takes in the scheduler's and the kubelet's eyes,
the whole-pod requests formula, and the fit checks built on them."""
