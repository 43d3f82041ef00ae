"""One predicate per entry of the property catalog (``spec/kep/properties.py``), with the same name.

State-scope predicates take ``(ctx, state)``; step-scope predicates take ``(ctx, before, action,
after)`` and judge the decision the action took. For ``always`` properties a true value means the
property holds there; for ``sometimes`` properties it means this state/step is a witness. Like the
actions, every predicate is written with ``model/expr`` helpers, so it evaluates to a bool on
concrete states, to a Z3 term on symbolic ones and to a traced term for the vector core.

Where each lives: capacity (``model/properties/capacity.py``), victims (``victims.py``), the resize
conditions (``conditions.py``), the step witnesses (``witnesses.py``); the eventually-properties are
premises and goals (``eventually.py``, ``LIVENESS``), judged by ``checks/engines/liveness.py``.
``PREDICATES`` maps every always- and sometimes-property of the catalog to its predicate.
"""

from __future__ import annotations

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES

from kepcheck.model.properties import capacity, conditions, victims, witnesses
from kepcheck.model.step import snake_case

__all__ = ["PREDICATES"]

_MODULES = (capacity, victims, conditions, witnesses)


def _predicate(name: str):
    function = snake_case(name)
    return next(getattr(module, function) for module in _MODULES if hasattr(module, function))


PREDICATES = {spec.name: _predicate(spec.name) for spec in PROPERTIES if spec.kind in (ALWAYS, SOMETIMES)}
