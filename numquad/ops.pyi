# Generated from numquad/ops.py by `python -m numquad._stubgen`; do not edit.
# tests/test_stubs.py checks that it is current.
"""The op catalogue: one entry per cross-lane op, with its reference semantics.

Every Quad and Wave op is one :class:`Op` in :data:`OPS`. The CPU wave
compiler, the CUDA lowering, the generated reference docs (docs/ops.md) and the
tests are all driven from these entries; the targets differ only in lowering.

Reference semantics work on NumPy arrays shaped ``(waves, 32)``: ``x[w, l]`` is
the value of lane ``l`` of wave ``w`` and ``active[w, l]`` says whether that lane
reached the call. The rules (docs/semantics.md states them in full):

* moves (swaps, broadcasts, shuffles) that read an inactive or out-of-range lane
  return the reader's own value; selectors are used with their exact value;
* votes, ballots and bit counts read inactive lanes as false;
* scans and reductions skip inactive lanes, in one fixed association order.
  Scans run over the *ranks* of the active lanes (the active values compressed
  to the front in lane order): a log-step (Kogge-Stone) inclusive scan,
  ``v[r] = v[r - d] (+) v[r]`` for ``d = 1, 2, 4, 8, 16`` and ``r >= d``,
  shifted up one rank for the exclusive result (rank 0 gets the identity).
  Reductions are a butterfly over lane positions, ``v[l] = v[l] (+) v[l ^ d]``
  for ``d = 1, 2, 4, 8, 16``, an inactive lane holding the identity, so every
  lane holds the same bits;
* float min/max: a NaN operand loses, and -0.0 < +0.0;
* integer arithmetic wraps modulo 2**bits; ``prefixSum``/``reduceSum`` of a bool
  counts true lanes and returns uint32.

Only the values in active lanes are specified; inactive lanes of a result are
left as the input (NumPy reference) or untouched (targets).
"""

import dataclasses
from typing import Any, Callable, Final, Optional, TypeAlias, TypeVar, overload

import numpy as np

__all__ = [
    "WAVE",
    "QUAD",
    "VALUE_DTYPES",
    "BITWISE_DTYPES",
    "PRED_DTYPES",
    "FLOAT_DTYPES",
    "Op",
    "OPS",
    "get",
    "unknown_value",
    "quad_move",
    "derivative_sources",
    "of_function",
    "function_for",
    "is_namespace",
    "Quad",
    "Wave",
]

_Selector: TypeAlias = np.int8 | np.int16 | np.int32 | np.int64 | np.uint8 | np.uint16 | np.uint32 | np.uint64 | int
_ValueT = TypeVar("_ValueT", np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32, np.float64, bool, int, float)
_Pred: TypeAlias = np.bool_ | np.int8 | np.int16 | np.int32 | np.int64 | np.uint8 | np.uint16 | np.uint32 | np.uint64 | bool | int
_FloatT = TypeVar("_FloatT", np.float32, np.float64, float)
_Value_bool: TypeAlias = np.bool_ | bool
_ValueT_no_bool = TypeVar("_ValueT_no_bool", np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32, np.float64, int, float)
_BitwiseT = TypeVar("_BitwiseT", np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, bool, int)
_Value: TypeAlias = np.bool_ | np.int8 | np.int16 | np.int32 | np.int64 | np.uint8 | np.uint16 | np.uint32 | np.uint64 | np.float32 | np.float64 | bool | int | float

WAVE: Final = 32

QUAD: Final = 4

VALUE_DTYPES: tuple[np.dtype[Any], ...]

BITWISE_DTYPES: tuple[np.dtype[Any], ...]

PRED_DTYPES: tuple[np.dtype[Any], ...]

FLOAT_DTYPES: tuple[np.dtype[Any], ...]

@dataclasses.dataclass(frozen=True)
class Op:
    """One cross-lane op.

    ``kind`` selects the lowering family on every target, and one field of the
    row selects the op within it (:data:`_KIND_FIELDS`); no target tests an op's
    name:

    ``query``     per-lane constant; ``query``: ``lane`` (the lane's index in its
                  quad or wave, by ``namespace``) or ``width``; no operand;
    ``move``      read another lane's value: ``pattern(lane, sel) -> source lane``;
                  ``sel_kind`` says how the source lane is found (``first``: the
                  first active lane, no pattern);
    ``vote``      quad-wide or wave-wide ``vote``: ``all`` (AND) or ``any`` (OR)
                  of a predicate;
    ``ballot``    ``vote``: ``ballot`` (the wave's ballot word), ``count`` (its
                  popcount) or ``prefix_count`` (the popcount below a lane);
    ``scan``      exclusive log-step scan with ``combine``;
    ``reduce``    butterfly reduction with ``combine``;
    ``allequal``  are all active lanes bitwise equal;
    ``derivative`` a difference of two quad lanes' values (float types only):
                  ``derivative``: ``fine`` or ``coarse`` (:func:`derivative_sources`),
                  ``xor_const`` the quad-lane bit of the axis (1: x, 2: y); the
                  targets lower it as the quad moves it reads plus one subtraction.
    """
    namespace: str
    name: str
    kind: str
    params: tuple[Any, ...]
    summary: str
    example: str
    types: str = "value"
    combine: Optional[str] = None
    query: Optional[str] = None
    vote: Optional[str] = None
    pattern: Optional[Callable[..., Any]] = None
    xor_const: Optional[int] = None
    sel_range: Optional[range] = None
    sel_wrap: Optional[int] = None
    sel_kind: Optional[str] = None
    derivative: Optional[str] = None

    @property
    def qualname(self) -> str: ...

    @property
    def combine_fn(self) -> Any: ...

    @property
    def operand(self) -> Optional[str]: ...

    @property
    def selector(self) -> Optional[str]: ...

    @property
    def accepted(self) -> tuple[Any, ...]:
        """The operand dtypes this op takes."""

    @property
    def accepted_words(self) -> str: ...

    def result_dtype(self, dtype: Any = None) -> np.dtype[Any]:
        """The result dtype for an operand of *dtype*."""

    def check_operand(self, dtype: Any) -> Optional[str]:
        """None if *dtype* is accepted, else the complaint (without location)."""

    def check_selector_type(self, type_name: Any, is_integer: Any) -> Optional[str]:
        """None if a selector of type *type_name* (an integer when *is_integer*) is
        accepted, else the complaint (without location): one wording for every target.
        """

    def check_arity(self, args: Any, keywords: Any) -> tuple[Any, ...]:
        """(the call's arguments in parameter order, None), or ((), the complaint) for a
        call with *args* (a list) and *keywords* ({name: value}) that does not bind to
        the op's parameters: one wording for every target.
        """

    def check_selector_constant(self, value: Any) -> Optional[str]: ...

    def reference(self, *args: Any, active: Any) -> Any:
        """Pure-NumPy semantics over ``(waves, 32)`` arrays; see the module doc."""

    @property
    def doc(self) -> str: ...

OPS: dict[str, Op]

def get(qualname: str) -> Op:
    """The :class:`Op` named *qualname*, e.g. ``"Wave.prefixSum"``."""

def unknown_value(field: str, value: Any, op: Optional[Op] = None) -> NotImplementedError:
    """The error for a catalogue field value that a lowering has no branch for.

    Every per-op choice in a target is made on a field of the op's row (the
    kind, ``query``, ``vote``, ``sel_kind``, the combine's operator and
    identity); a value no branch handles is raised, never sent down a default
    branch. The caller raises what this returns.
    """

def quad_move(sel_kind: str, xor_const: Optional[int] = None) -> Op:
    """The Quad move row with these fields (``("xor", 1)``: the horizontal swap;
    ``("quad",)``: the broadcast): the moves a derivative is lowered with.
    """

def derivative_sources(op: Any, lane: Any) -> Any:
    """(hi, lo): the lanes a derivative reads, ``hi - lo``, for *lane* (an int, a
    NumPy array or a target's integer wrapper). ``op.xor_const`` is the quad-lane bit
    of the axis (1: x, 2: y); ``fine`` reads within the lane's own row (x) or column
    (y) of the quad, ``coarse`` the quad's lane 0 and its neighbour along the axis.
    """

def of_function(obj: Any) -> Optional[Op]:
    """The :class:`Op` behind a ``Quad.*``/``Wave.*`` object, else None."""

def function_for(op: Op) -> Any:
    """A callable object that stands for *op* in kernels as ``Wave.*`` objects do
    (:func:`of_function` gives *op* back), for an op outside the namespaces.
    """

def is_namespace(obj: Any) -> bool:
    """Is *obj* one of the op namespaces (``Quad``, ``Wave``)?"""

class Quad:
    """Quad ops: each quad is four consecutive lanes (laneId & ~3 .. +3), seen as a 2x2 block [0 1; 2 3]."""

    @staticmethod
    def laneId() -> np.uint32:
        """Quad.laneId()

        This lane's index in its quad, laneId & 3, as uint32.

        Example: lanes 0..7 -> 0 1 2 3 0 1 2 3
        """

    @staticmethod
    def broadcast(value: _ValueT, index: _Selector) -> _ValueT:
        """Quad.broadcast(value, index)

        The value of quad lane `index` (0..3). A constant index outside 0..3 is a compile error; a runtime index is taken & 3. Reading an inactive lane returns the reader's own value.

        Example: value [a b c d], index 2 -> [c c c c]
        """

    @staticmethod
    def swapHorizontal(value: _ValueT) -> _ValueT:
        """Quad.swapHorizontal(value)

        The value of lane laneId ^ 1 (swap within each row of the 2x2 quad). Reading an inactive lane returns the reader's own value.

        Example: [a b c d] -> [b a d c]
        """

    @staticmethod
    def swapVertical(value: _ValueT) -> _ValueT:
        """Quad.swapVertical(value)

        The value of lane laneId ^ 2 (swap the rows of the 2x2 quad). Reading an inactive lane returns the reader's own value.

        Example: [a b c d] -> [c d a b]
        """

    @staticmethod
    def swapDiagonal(value: _ValueT) -> _ValueT:
        """Quad.swapDiagonal(value)

        The value of lane laneId ^ 3 (swap across the diagonal of the quad). Reading an inactive lane returns the reader's own value.

        Example: [a b c d] -> [d c b a]
        """

    @staticmethod
    def all(pred: _Pred) -> np.bool_:
        """Quad.all(pred)

        True in every lane of the quad when the predicate is true in all four lanes; inactive lanes read as false.

        Example: [T T T T] -> [T T T T]; [T T F T] -> [F F F F]
        """

    @staticmethod
    def any(pred: _Pred) -> np.bool_:
        """Quad.any(pred)

        True in every lane of the quad when the predicate is true in any of its lanes; inactive lanes read as false.

        Example: [F F T F] -> [T T T T]
        """

    @staticmethod
    def ddx(value: _FloatT) -> _FloatT:
        """Quad.ddx(value)

        Fine x derivative of the 2x2 quad [0 1; 2 3]: lanes 0 and 1 get v1 - v0, lanes 2 and 3 get v3 - v2 (right minus left in the lane's row), one subtraction. The row partner is read as Quad.swapHorizontal reads it: an inactive partner gives the lane's own value, so the lane gets v - v (0; NaN for an inf or NaN v). float32 or float64 only.

        Example: [a b c d] -> [b-a b-a d-c d-c]
        """

    @staticmethod
    def ddy(value: _FloatT) -> _FloatT:
        """Quad.ddy(value)

        Fine y derivative of the 2x2 quad [0 1; 2 3]: lanes 0 and 2 get v2 - v0, lanes 1 and 3 get v3 - v1 (bottom minus top in the lane's column), one subtraction. The column partner is read as Quad.swapVertical reads it: an inactive partner gives the lane's own value, so the lane gets v - v (0; NaN for an inf or NaN v). float32 or float64 only.

        Example: [a b c d] -> [c-a d-b c-a d-b]
        """

    @staticmethod
    def ddxCoarse(value: _FloatT) -> _FloatT:
        """Quad.ddxCoarse(value)

        Coarse x derivative of the 2x2 quad [0 1; 2 3]: every lane gets v1 - v0 (the top row's), one subtraction. v1 and v0 are read as Quad.broadcast reads them: an inactive quad lane 0 or 1 gives the reader's own value (lane 0 inactive: lane 1 gets v1 - v1, lane 2 v1 - v2). float32 or float64 only.

        Example: [a b c d] -> [b-a b-a b-a b-a]
        """

    @staticmethod
    def ddyCoarse(value: _FloatT) -> _FloatT:
        """Quad.ddyCoarse(value)

        Coarse y derivative of the 2x2 quad [0 1; 2 3]: every lane gets v2 - v0 (the left column's), one subtraction. v2 and v0 are read as Quad.broadcast reads them: an inactive quad lane 0 or 2 gives the reader's own value (lane 0 inactive: lane 2 gets v2 - v2, lane 1 v2 - v1). float32 or float64 only.

        Example: [a b c d] -> [c-a c-a c-a c-a]
        """

class Wave:
    """Wave ops: a wave is 32 consecutive threads of a block by linear thread id."""

    @staticmethod
    def laneId() -> np.uint32:
        """Wave.laneId()

        This lane's index in its wave, 0..31, as uint32.

        Example: lane 5 -> 5
        """

    @staticmethod
    def width() -> np.uint32:
        """Wave.width()

        The number of lanes in a wave: 32 on every target, as uint32.

        Example: -> 32
        """

    @overload
    @staticmethod
    def prefixSum(value: _Value_bool) -> np.uint32:  # type: ignore[overload-overlap]
        """Wave.prefixSum(value)

        Exclusive sum over the active lanes below this one (the lowest active lane gets 0); inactive lanes are skipped. Integers wrap; a bool counts true lanes (uint32); floats add in the fixed log-step order.

        Example: [1 2 3 4 ...] -> [0 1 3 6 ...]
        """

    @overload
    @staticmethod
    def prefixSum(value: _ValueT_no_bool) -> _ValueT_no_bool:
        """Wave.prefixSum(value)

        Exclusive sum over the active lanes below this one (the lowest active lane gets 0); inactive lanes are skipped. Integers wrap; a bool counts true lanes (uint32); floats add in the fixed log-step order.

        Example: [1 2 3 4 ...] -> [0 1 3 6 ...]
        """

    @staticmethod
    def prefixProduct(value: _ValueT) -> _ValueT:
        """Wave.prefixProduct(value)

        Exclusive product over the active lanes below this one (the lowest active lane gets 1); inactive lanes are skipped.

        Example: [2 3 4 5 ...] -> [1 2 6 24 ...]
        """

    @staticmethod
    def ballot(pred: _Pred) -> np.uint32:
        """Wave.ballot(pred)

        A uint32 whose bit i is set when lane i is active and its predicate is true; the same word in every lane.

        Example: pred true in lanes 0 and 3 -> 0b1001 = 9
        """

    @staticmethod
    def any(pred: _Pred) -> np.bool_:
        """Wave.any(pred)

        True in every lane when the predicate is true in any active lane.

        Example: [F F T F ...] -> [T T T T ...]
        """

    @staticmethod
    def all(pred: _Pred) -> np.bool_:
        """Wave.all(pred)

        True in every lane when the predicate is true in all 32 lanes; inactive lanes read as false, so a partial wave gives false.

        Example: [T T T ... T] -> [T T T ... T]
        """

    @overload
    @staticmethod
    def reduceSum(value: _Value_bool) -> np.uint32:  # type: ignore[overload-overlap]
        """Wave.reduceSum(value)

        Sum over the active lanes, in every active lane (butterfly order for floats).

        Example: [1 2 3 4 ...] -> [S S S S ...]
        """

    @overload
    @staticmethod
    def reduceSum(value: _ValueT_no_bool) -> _ValueT_no_bool:
        """Wave.reduceSum(value)

        Sum over the active lanes, in every active lane (butterfly order for floats).

        Example: [1 2 3 4 ...] -> [S S S S ...]
        """

    @staticmethod
    def reduceProduct(value: _ValueT) -> _ValueT:
        """Wave.reduceProduct(value)

        Product over the active lanes, in every active lane.

        Example: [1 2 3 ...] -> [P P P ...]
        """

    @staticmethod
    def reduceMin(value: _ValueT) -> _ValueT:
        """Wave.reduceMin(value)

        Minimum over the active lanes, in every active lane (a NaN loses to a number; inactive lanes count as +inf for floats, so all-NaN active lanes of a partial wave give +inf, a full wave NaN).

        Example: [3 1 2 ...] -> [1 1 1 ...]
        """

    @staticmethod
    def reduceMax(value: _ValueT) -> _ValueT:
        """Wave.reduceMax(value)

        Maximum over the active lanes, in every active lane (a NaN loses to a number; inactive lanes count as -inf for floats, so all-NaN active lanes of a partial wave give -inf, a full wave NaN).

        Example: [3 1 2 ...] -> [3 3 3 ...]
        """

    @staticmethod
    def reduceAnd(value: _BitwiseT) -> _BitwiseT:
        """Wave.reduceAnd(value)

        Bitwise AND over the active lanes, in every active lane.

        Example: [6 3 7 ...] -> [2 2 2 ...]
        """

    @staticmethod
    def reduceOr(value: _BitwiseT) -> _BitwiseT:
        """Wave.reduceOr(value)

        Bitwise OR over the active lanes, in every active lane.

        Example: [1 2 4 ...] -> [7 7 7 ...]
        """

    @staticmethod
    def reduceXor(value: _BitwiseT) -> _BitwiseT:
        """Wave.reduceXor(value)

        Bitwise XOR over the active lanes, in every active lane.

        Example: [1 3 4 ...] -> [6 6 6 ...]
        """

    @staticmethod
    def prefixMin(value: _ValueT) -> _ValueT:
        """Wave.prefixMin(value)

        Exclusive minimum over the active lanes below this one (the lowest active lane gets the type's maximum, +inf for floats; a NaN loses to a number, so a lane gets NaN only where every active lane below it holds NaN).

        Example: [3 1 2 ...] -> [MAX 3 1 ...]
        """

    @staticmethod
    def prefixMax(value: _ValueT) -> _ValueT:
        """Wave.prefixMax(value)

        Exclusive maximum over the active lanes below this one (the lowest active lane gets the type's minimum, -inf for floats; a NaN loses to a number, so a lane gets NaN only where every active lane below it holds NaN).

        Example: [3 1 4 ...] -> [MIN 3 3 ...]
        """

    @staticmethod
    def prefixAnd(value: _BitwiseT) -> _BitwiseT:
        """Wave.prefixAnd(value)

        Exclusive bitwise AND over the active lanes below this one (the lowest active lane gets all ones).

        Example: [7 6 4 ...] -> [~0 7 6 ...]
        """

    @staticmethod
    def prefixOr(value: _BitwiseT) -> _BitwiseT:
        """Wave.prefixOr(value)

        Exclusive bitwise OR over the active lanes below this one (the lowest active lane gets 0).

        Example: [1 2 4 ...] -> [0 1 3 ...]
        """

    @staticmethod
    def prefixXor(value: _BitwiseT) -> _BitwiseT:
        """Wave.prefixXor(value)

        Exclusive bitwise XOR over the active lanes below this one (the lowest active lane gets 0).

        Example: [1 3 4 ...] -> [0 1 2 ...]
        """

    @staticmethod
    def countBits(pred: _Pred) -> np.uint32:
        """Wave.countBits(pred)

        The number of active lanes whose predicate is true (uint32), in every lane.

        Example: [T F T T ...] -> [3 3 3 3 ...]
        """

    @staticmethod
    def prefixCountBits(pred: _Pred) -> np.uint32:
        """Wave.prefixCountBits(pred)

        The number of active lanes below this one whose predicate is true (uint32).

        Example: [T F T T ...] -> [0 1 1 2 ...]
        """

    @staticmethod
    def broadcast(value: _ValueT, lane: _Selector) -> _ValueT:
        """Wave.broadcast(value, lane)

        The value of lane `lane` (taken & 31); reading an inactive lane returns the reader's own value.

        Example: [a b c d ...], lane 2 -> [c c c c ...]
        """

    @staticmethod
    def readFirst(value: _ValueT) -> _ValueT:
        """Wave.readFirst(value)

        The value of the first (lowest) active lane.

        Example: lanes 0,1 inactive: [- - c d ...] -> [- - c c ...]
        """

    @staticmethod
    def shuffle(value: _ValueT, srcLane: _Selector) -> _ValueT:
        """Wave.shuffle(value, srcLane)

        The value of lane srcLane & 31 (each lane may name its own source); reading an inactive lane returns the reader's own value.

        Example: [a b c d], srcLane [3 2 1 0] -> [d c b a]
        """

    @staticmethod
    def shuffleXor(value: _ValueT, laneMask: _Selector) -> _ValueT:
        """Wave.shuffleXor(value, laneMask)

        The value of lane laneId ^ (laneMask & 31); reading an inactive lane returns the reader's own value.

        Example: [a b c d], laneMask 1 -> [b a d c]
        """

    @staticmethod
    def shuffleUp(value: _ValueT, delta: _Selector) -> _ValueT:
        """Wave.shuffleUp(value, delta)

        The value of lane laneId - delta; a source below lane 0 (or inactive) gives the lane's own value.

        Example: [a b c d], delta 1 -> [a a b c]
        """

    @staticmethod
    def shuffleDown(value: _ValueT, delta: _Selector) -> _ValueT:
        """Wave.shuffleDown(value, delta)

        The value of lane laneId + delta; a source above lane 31 (or inactive) gives the lane's own value.

        Example: [a b c d], delta 1 -> [b c d d] (in a 4-lane wave)
        """

    @staticmethod
    def allEqual(value: _Value) -> np.bool_:
        """Wave.allEqual(value)

        True in every lane when all active lanes hold the same bits.

        Example: [5 5 5 ...] -> [T T T ...]
        """
