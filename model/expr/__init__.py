"""Expressions that evaluate on plain ints, Z3 terms, traced terms and numpy columns alike: the
vocabulary every guard, effect and predicate of the model is written in."""
