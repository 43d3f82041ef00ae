"""How the system behaves: the state, the actions of each actor (``user``, ``scheduler``, ``kubelet``),
the scheduler's event handlers (``informer``), ``NEXT`` (``actions``), accounting and views,
preemption, property predicates, the lifecycle projection, symmetry, strengthening invariants and
mutants; ``expr`` evaluates it all on ints and on Z3 terms, ``memo`` declares its caches. Imports
``spec`` only."""
