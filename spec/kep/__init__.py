"""The KEP as data: its vocabulary, the resize lifecycle transition table, the property catalog,
the fairness assumptions, the design decisions and variants, and the expected-verdict manifest."""
