"""kepcheck: a model checker and spec test suite for KEP-5836, scheduler preemption for in-place pod
resize.

Three layers, each a subpackage, with imports pointing one way (``spec`` <- ``model`` <- ``checks``):

* ``kepcheck.spec`` — what the KEP says, as data;
* ``kepcheck.model`` — how the system behaves;
* ``kepcheck.checks`` — how it is checked: engines, results, reports and the command line.

``python -m kepcheck`` runs the command line (the ``kepcheck`` command).
"""

__version__ = "0.1.0"
