"""The vector core: the model traced once into an expression graph, evaluated over whole frontiers
of packed states with numpy or compiled C, and its visited set."""
