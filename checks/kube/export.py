"""``kepcheck export TRACE [-o DIR]``: a counterexample (or witness) turned into artefacts a Kubernetes
engineer can run or paste, written into one directory:

* ``manifests.yaml`` — the initial objects as Kubernetes v1.37 manifests (KWOK fake Nodes,
  PriorityClasses, Pods; ``checks/kube/manifests.py``);
* ``steps.sh`` — the user's steps as ``kubectl`` commands, the scheduler's and the kubelet's as
  expected observations, the breach at the end (``checks/kube/export_text.py``);
* ``<name>_test.go`` — a Go table-test case in the shape of the scheduler's integration tests for
  KEP-5836 (``test/integration/scheduler/preemption/deferred_resize_preemption_test.go``);
* ``test_regression_<name>.py`` — a pytest regression for this project;
* ``README.md`` — what each file is, how to run it, and what a real cluster cannot be forced to do.

The directory is checked before anything is written and replaced atomically, as the review report is
(``checks/outputs/files.py``); it must be new, empty, or one an earlier export wrote (its README starts with
``EXPORT_HEADING``): a review report or any other directory that holds files is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from kepcheck.checks.exits import EXIT_OK
from kepcheck.checks.kube.export_text import EXPORT_HEADING, go_test, pytest_regression, readme, steps_script
from kepcheck.checks.kube.manifests import Export, load_export, manifests_yaml
from kepcheck.checks.outputs.files import OutputError, atomic_directory, check_output_dir, say

__all__ = ["exported_files", "write_export", "command_export", "add_export_parser"]


def exported_files(export: Export) -> dict[str, str]:
    """File name -> text of every artefact, in a fixed order."""
    return {"README.md": readme(export), "manifests.yaml": manifests_yaml(export), "steps.sh": steps_script(export),
            f"{export.name}_test.go": go_test(export), f"test_regression_{export.name}.py": pytest_regression(export)}


def _previous_export(target: Path) -> bool:
    """A directory an earlier ``kepcheck export`` wrote (its README.md starts with the heading)."""
    try:
        with open(target / "README.md", encoding="utf-8", errors="replace") as readme_file:
            return readme_file.read(len(EXPORT_HEADING)) == EXPORT_HEADING
    except OSError:
        return False


def _checked_target(value: str) -> Path:
    """The output directory, checked as the report's is (``checks/output.check_output_dir``): new,
    empty, or a previous export (never a review report or anything else that holds files)."""
    usable = bool(value.strip()) and "\0" not in value
    target = Path(os.path.realpath(os.path.abspath(value))) if usable else None
    if target is None or not target.is_dir() or not os.listdir(target):
        return check_output_dir(value)
    if not _previous_export(target):
        entries = sorted(os.listdir(target))
        shown = ", ".join(entries[:3]) + (", …" if len(entries) > 3 else "")
        raise OutputError(value, f"exists and is not a kepcheck export (it holds {shown}); name a new or empty "
                                 "directory, or a previous export")
    if not os.access(target, os.W_OK | os.X_OK) or not os.access(target.parent, os.W_OK | os.X_OK):
        raise OutputError(value, "is a previous export that is not writable")
    cwd = Path.cwd().resolve()
    if target == cwd or target in cwd.parents:
        raise OutputError(value, "is the current directory or contains it; name another directory")
    return target


def write_export(export: Export, out) -> Path:
    """Write every artefact into the directory ``out`` (checked first, replaced atomically); its path."""
    target = _checked_target(str(out))
    with atomic_directory(target, shown=out) as staging:
        for name, text in exported_files(export).items():
            (staging / name).write_text(text, encoding="utf-8")
        os.chmod(staging / "steps.sh", 0o755)
    return target


def command_export(options) -> int:
    """``kepcheck export TRACE [-o DIR]`` (default DIR: ``export-<scenario>_<variant>_<property>``)."""
    if options.export_dir is not None:
        _checked_target(options.export_dir)  # before the replay: a bad directory costs nothing
    export = load_export(options.trace)
    target = write_export(export, options.export_dir or f"export-{export.name}")
    say(f"kepcheck: wrote the export of {Path(options.trace).name} to {target}")
    return EXIT_OK


def add_export_parser(sub) -> None:
    """The ``export`` subcommand's arguments (``checks/cli/main.py`` calls this)."""
    export = sub.add_parser("export", help="turn an ITF trace into Kubernetes manifests, kubectl steps, a Go "
                            "integration-test case and a pytest regression")
    export.add_argument("trace", metavar="TRACE", help="an ITF trace file (.itf.json) as the review report writes")
    export.add_argument("-o", "--out", dest="export_dir", metavar="DIR",
                        help="the directory to write (default: export-<scenario>_<variant>_<property>)")
