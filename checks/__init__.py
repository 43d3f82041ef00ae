"""How the model is checked: the engines (``explicit``, ``liveness``, ``bmc``, ``induction``,
``random``) behind one protocol (``engine``), the common result and trace types (``result``), the
run pipeline (``run``), the outputs (``describe``, ``report``, ``trace_report``, ``lifecycle``,
``review``) and the command line (``cli``)."""
