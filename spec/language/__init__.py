"""The scenario language: how a scenario file is read (safely), its fields, containers, limits,
PodDisruptionBudgets and PriorityClasses, into the plain data the model runs on."""
