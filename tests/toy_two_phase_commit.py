"""Toy models for engine smoke tests: TwoPhase commit and Die Hard, as ``TransitionSystem`` values.

TwoPhase follows tlaplus/Examples ``specifications/transaction_commit/TwoPhase.tla`` action for
action (the same model as Stateright's ``examples/2pc.rs``): resource managers (RMs) prepare or
choose to abort, the transaction manager (TM) collects ``Prepared`` messages and broadcasts
``Commit`` once every RM has prepared, or ``Abort`` at any time before deciding. Messages are
never lost or removed (``msgs`` only grows), exactly as in the TLA+ spec. With 3 RMs the model has
288 distinct states (TLC and Stateright both report that number).

``broken=True`` removes the guard ``tmPrepared = RM`` of ``TMCommit``: the TM may commit while an
RM has already chosen to abort, so TCConsistent fails (a model that must fail, docs/style.md R11).

Die Hard (tlaplus/Examples ``DieHard.tla``): a 3-gallon and a 5-gallon jug, fill, empty or pour;
the goal is 4 gallons in the big jug, first reached after 6 steps.

Deliberately left out: TwoPhase's type invariant is not a property here (the frozen dataclasses
and the finite action menu keep every field in its domain by construction); no symmetry reduction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kepcheck.checks.search.breadth_first import TransitionSystem
from kepcheck.spec.kep.properties import ALWAYS, SOMETIMES

__all__ = [
    "TPState", "TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg",
    "RMRcvAbortMsg", "tp_init", "tp_next", "tc_consistent", "two_phase_system",
    "Jugs", "JugAction", "die_hard_next", "die_hard_system",
]

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
INIT, DONE = "init", "done"

# Messages: ("Prepared", rm), ("Commit",), ("Abort",) — TwoPhase.tla's Messages set.
COMMIT_MSG = ("Commit",)
ABORT_MSG = ("Abort",)


def prepared_msg(rm: int) -> tuple:
    return ("Prepared", rm)


@dataclass(frozen=True, slots=True)
class TPState:
    rm_state: tuple  # rmState: one of WORKING/PREPARED/COMMITTED/ABORTED per RM
    tm_state: str  # tmState: INIT or DONE
    tm_prepared: frozenset  # tmPrepared: RMs from which the TM has received "Prepared"
    msgs: frozenset  # msgs: every message ever sent


# --- actions: small frozen values with .name and .label() -----------------------------------------

@dataclass(frozen=True, slots=True)
class _RMAction:
    rm: int

    @property
    def name(self) -> str:
        return type(self).__name__

    def label(self) -> str:
        return f"{self.name}(rm={self.rm})"


@dataclass(frozen=True, slots=True)
class _TMAction:
    @property
    def name(self) -> str:
        return type(self).__name__

    def label(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class TMRcvPrepared(_RMAction):
    """The TM receives a "Prepared" message from ``rm``."""


@dataclass(frozen=True, slots=True)
class TMCommit(_TMAction):
    """The TM commits (every RM prepared) and sends "Commit"."""


@dataclass(frozen=True, slots=True)
class TMAbort(_TMAction):
    """The TM spontaneously aborts and sends "Abort"."""


@dataclass(frozen=True, slots=True)
class RMPrepare(_RMAction):
    """``rm`` prepares and sends "Prepared"."""


@dataclass(frozen=True, slots=True)
class RMChooseToAbort(_RMAction):
    """``rm`` spontaneously aborts."""


@dataclass(frozen=True, slots=True)
class RMRcvCommitMsg(_RMAction):
    """``rm`` receives "Commit"."""


@dataclass(frozen=True, slots=True)
class RMRcvAbortMsg(_RMAction):
    """``rm`` receives "Abort"."""


def _set_rm(state: TPState, rm: int, value: str) -> tuple:
    rm_state = list(state.rm_state)
    rm_state[rm] = value
    return tuple(rm_state)


def tp_init(rm_count: int = 3) -> TPState:
    """TPInit."""
    return TPState((WORKING,) * rm_count, INIT, frozenset(), frozenset())


def tp_next(state: TPState, broken: bool = False):
    """TPNext: yields ``(action, next_state)`` for every enabled action (guard, then effect)."""
    rms = range(len(state.rm_state))
    all_rms = frozenset(rms)
    # TMCommit
    if state.tm_state == INIT and (broken or state.tm_prepared == all_rms):
        yield TMCommit(), replace(state, tm_state=DONE, msgs=state.msgs | {COMMIT_MSG})
    # TMAbort
    if state.tm_state == INIT:
        yield TMAbort(), replace(state, tm_state=DONE, msgs=state.msgs | {ABORT_MSG})
    for rm in rms:
        # TMRcvPrepared(rm)
        if state.tm_state == INIT and prepared_msg(rm) in state.msgs:
            yield TMRcvPrepared(rm), replace(state, tm_prepared=state.tm_prepared | {rm})
        # RMPrepare(rm)
        if state.rm_state[rm] == WORKING:
            yield RMPrepare(rm), replace(state, rm_state=_set_rm(state, rm, PREPARED),
                                         msgs=state.msgs | {prepared_msg(rm)})
        # RMChooseToAbort(rm)
        if state.rm_state[rm] == WORKING:
            yield RMChooseToAbort(rm), replace(state, rm_state=_set_rm(state, rm, ABORTED))
        # RMRcvCommitMsg(rm)
        if COMMIT_MSG in state.msgs:
            yield RMRcvCommitMsg(rm), replace(state, rm_state=_set_rm(state, rm, COMMITTED))
        # RMRcvAbortMsg(rm)
        if ABORT_MSG in state.msgs:
            yield RMRcvAbortMsg(rm), replace(state, rm_state=_set_rm(state, rm, ABORTED))


def tc_consistent(state: TPState) -> bool:
    """TCConsistent: no RM has committed while another has aborted."""
    return not (COMMITTED in state.rm_state and ABORTED in state.rm_state)


def two_phase_system(rm_count: int = 3, broken: bool = False) -> TransitionSystem:
    return TransitionSystem(
        initial=lambda: [tp_init(rm_count)],
        successors=lambda state: tp_next(state, broken),
        state_properties=[
            ("TCConsistent", ALWAYS, tc_consistent),
            ("SomeRMCommits", SOMETIMES, lambda s: COMMITTED in s.rm_state),
            ("SomeRMAborts", SOMETIMES, lambda s: ABORTED in s.rm_state),
        ],
    )


# --- Die Hard ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Jugs:
    small: int  # gallons in the 3-gallon jug
    big: int  # gallons in the 5-gallon jug


@dataclass(frozen=True, slots=True)
class JugAction:
    name: str

    def label(self) -> str:
        return self.name


def die_hard_next(state: Jugs):
    """DieHard.tla's Next: fill, empty, or pour one jug into the other. Every action is always
    enabled (filling a full jug is a self-loop), as in the TLA+ spec."""
    small, big = state.small, state.big
    yield JugAction("FillSmallJug"), Jugs(3, big)
    yield JugAction("FillBigJug"), Jugs(small, 5)
    yield JugAction("EmptySmallJug"), Jugs(0, big)
    yield JugAction("EmptyBigJug"), Jugs(small, 0)
    poured = min(small, 5 - big)
    yield JugAction("SmallToBig"), Jugs(small - poured, big + poured)
    poured = min(big, 3 - small)
    yield JugAction("BigToSmall"), Jugs(small + poured, big - poured)


def die_hard_system() -> TransitionSystem:
    return TransitionSystem(
        initial=lambda: [Jugs(0, 0)],
        successors=die_hard_next,
        state_properties=[
            ("Solved", SOMETIMES, lambda s: s.big == 4),
            ("NotSolved", ALWAYS, lambda s: s.big != 4),
            ("TypeOK", ALWAYS, lambda s: 0 <= s.small <= 3 and 0 <= s.big <= 5),
        ],
    )
