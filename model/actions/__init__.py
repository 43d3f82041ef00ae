"""The actions of each actor, one function each (guard, finite choice, effect), and ``NEXT``:
users and controllers, the kube-scheduler (with preemption), its informer, and the kubelet."""
