"""How the system behaves: state, accounting, views, preemption, actions per actor, properties,
lifecycle projection, symmetry and mutants. Imports ``spec`` only."""
