"""What KEP-5836 says, as data: vocabulary, the resize lifecycle transition table, the property
catalog, design decisions and variants, scenarios and the expected-verdict manifest.

This package imports nothing of ours (``spec`` <- ``model`` <- ``checks``).
"""
