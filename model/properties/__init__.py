"""The property predicates (one per catalog entry, same name), the explanations of their failures,
and the strengthening invariants of k-induction."""
