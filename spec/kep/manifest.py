"""The expected-verdict manifest (``spec/kep/manifest.yaml``) as data.

``load_manifest`` expands the grouped exceptions into one expectation per (scenario, variant,
property) and rejects unknown names and overlapping exceptions, so that every cell has exactly
one expected verdict with, for each exception, its reason and reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import yaml

from kepcheck.spec.kep.properties import PROPERTIES
from kepcheck.spec.kep.variants import VARIANTS

__all__ = ["Expectation", "Manifest", "load_manifest", "MANIFEST_PATH"]

MANIFEST_PATH = Path(__file__).parent / "manifest.yaml"
VERDICTS = ("holds", "violated", "inconclusive")


@dataclass(frozen=True)
class Expectation:
    verdict: str
    reason: str = ""
    ref: str = ""


class Manifest:
    def __init__(self, scenario_names: list[str], exceptions: dict):
        self.scenario_names = scenario_names
        self._exceptions = exceptions
        self._catalog = {p.name for p in PROPERTIES}

    def expected(self, scenario: str, variant: str, prop: str) -> Expectation | None:
        """None for a scenario outside the manifest and for a check that is not in the catalog (the
        random engine's differential checks)."""
        if scenario not in self.scenario_names or prop not in self._catalog:
            return None
        return self._exceptions.get((scenario, variant, prop), Expectation("holds"))

    def exceptions(self):
        return dict(self._exceptions)


def _names(value, known: list[str], field: str, where: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if values == ["*"]:
        return list(known)
    for name in values:
        if name not in known:
            raise ValueError(f"{where}: {field}: unknown name {name!r}")
    return values


def load_manifest(scenario_names: list[str], path: Path = MANIFEST_PATH) -> Manifest:
    document = yaml.safe_load(path.read_text())
    properties = [p.name for p in PROPERTIES]
    variants = [v.name for v in VARIANTS]
    exceptions: dict = {}
    for i, entry in enumerate(document.get("exceptions", [])):
        where = f"{path.name}: exceptions[{i}]"
        unknown = set(entry) - {"property", "verdict", "variants", "except_variants", "scenarios",
                                "except_scenarios", "reason", "ref"}
        if unknown:
            raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
        if entry.get("verdict") not in VERDICTS:
            raise ValueError(f"{where}: verdict must be one of {VERDICTS}")
        if not entry.get("reason") or not entry.get("ref"):
            raise ValueError(f"{where}: every exception needs a reason and a ref")
        props = _names(entry["property"], properties, "property", where)
        chosen_variants = [v for v in _names(entry["variants"], variants, "variants", where)
                           if v not in _names(entry.get("except_variants", []), variants, "except_variants", where)]
        chosen_scenarios = [s for s in _names(entry["scenarios"], scenario_names, "scenarios", where)
                            if s not in _names(entry.get("except_scenarios", []), scenario_names, "except_scenarios", where)]
        expectation = Expectation(entry["verdict"], " ".join(entry["reason"].split()), entry["ref"])
        for scenario in chosen_scenarios:
            for variant in chosen_variants:
                for prop in props:
                    key = (scenario, variant, prop)
                    if key in exceptions:
                        raise ValueError(f"{where}: {key} already has an expectation")
                    exceptions[key] = expectation
    return Manifest(scenario_names, exceptions)
