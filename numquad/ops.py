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

from __future__ import annotations

import dataclasses
import types as _pytypes
from typing import Callable, Optional

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

#: Lanes in a wave, on every target.
WAVE = 32
#: Lanes in a quad.
QUAD = 4

_INT_NAMES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
#: Types every value op takes (docs/architecture.md, section 1).
VALUE_DTYPES = tuple(np.dtype(n) for n in ("bool",) + _INT_NAMES + ("float32", "float64"))
#: Types the bitwise scans/reductions take.
BITWISE_DTYPES = tuple(np.dtype(n) for n in ("bool",) + _INT_NAMES)
#: Types a predicate takes (nonzero is true).
PRED_DTYPES = BITWISE_DTYPES
#: Types a derivative takes.
FLOAT_DTYPES = tuple(np.dtype(n) for n in ("float32", "float64"))
#: Types a lane selector (index, lane, delta, mask) takes.
SELECTOR_DTYPES = tuple(np.dtype(n) for n in _INT_NAMES)

_TYPE_CLASSES = {
    "value": VALUE_DTYPES,
    "bitwise": BITWISE_DTYPES,
    "pred": PRED_DTYPES,
    "float": FLOAT_DTYPES,
}
_TYPE_CLASS_WORDS = {
    "value": "bool, int8..int64, uint8..uint64, float32 or float64 scalar",
    "bitwise": "bool, int8..int64 or uint8..uint64 scalar",
    "pred": "bool or integer scalar (nonzero is true)",
    "float": "float32 or float64 scalar",
}

_U32 = np.dtype("uint32")
_BOOL = np.dtype("bool")


def unknown_value(field: str, value, op: Optional["Op"] = None) -> NotImplementedError:
    """The error for a catalogue field value that a lowering has no branch for.

    Every per-op choice in a target is made on a field of the op's row (the
    kind, ``query``, ``vote``, ``sel_kind``, the combine's operator and
    identity); a value no branch handles is raised, never sent down a default
    branch. The caller raises what this returns.
    """
    where = f"{op.qualname}: " if op is not None else ""
    return NotImplementedError(f"{where}no lowering for {field}={value!r}")


# ---------------------------------------------------------------------------
# Combine operators for scans and reductions
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Combine:
    """One combine operator. The targets lower it by its fields: ``name`` is the
    operator, ``ident`` the identity element, ``bool_as`` the operator on bools."""

    name: str  # the operator: add, mul, min, max, and, or, xor
    ufunc: Callable
    # the identity element (see identity()): "zero" (-0.0 for floats), "one",
    # "all_zeros", "all_ones", "greatest" (the type's maximum, +inf, True) or
    # "least" (its minimum, -inf, False)
    ident: str
    # the operator on bool operands, as NumPy computes it on bool arrays (a bool
    # product or minimum is an AND, a maximum an OR); None: bools are counted
    # into a uint32 instead (Op.result_dtype)
    bool_as: Optional[str]

    def identity(self, dtype: np.dtype, lane0: bool = False):
        """The identity element, as a NumPy scalar of *dtype*.

        A float ``zero`` is -0.0 for skipped lanes (the exact additive identity:
        ``-0.0 + x == x`` bit for bit) and +0.0 for lane 0 of an exclusive scan.
        """
        dtype = np.dtype(dtype)
        kind = dtype.kind
        if self.ident == "zero":
            if kind == "f" and not lane0:
                return dtype.type(-0.0)
            return dtype.type(0)
        if self.ident == "one":
            return dtype.type(1)
        if self.ident == "all_zeros":
            return dtype.type(0)
        if self.ident == "all_ones":
            return dtype.type(True) if kind == "b" else dtype.type(~dtype.type(0))
        if self.ident in ("greatest", "least"):
            top = self.ident == "greatest"
            if kind == "f":
                return dtype.type(np.inf if top else -np.inf)
            if kind == "b":
                return dtype.type(top)
            info = np.iinfo(dtype)
            return dtype.type(info.max if top else info.min)
        raise unknown_value("ident", self.ident)

    def __call__(self, a, b):
        with np.errstate(over="ignore", invalid="ignore"):
            return self.ufunc(a, b)


def _zero_tie(pick_negative):
    def ufunc_like(a, b):
        a, b = np.asarray(a), np.asarray(b)
        r = (np.fmin if pick_negative else np.fmax)(a, b)
        if r.dtype.kind == "f":
            # +0.0 and -0.0 compare equal: min takes -0.0 and max +0.0 in either order
            tie = (a == 0) & (b == 0)
            neg = np.signbit(a) | np.signbit(b) if pick_negative else np.signbit(a) & np.signbit(b)
            r = np.where(tie, np.where(neg, r.dtype.type(-0.0), r.dtype.type(0.0)), r)
        return r

    return ufunc_like


_COMBINES = {
    "add": _Combine("add", np.add, "zero", None),
    "mul": _Combine("mul", np.multiply, "one", "and"),
    # a NaN operand loses (as fmin/fmax); -0.0 < +0.0 (docs/semantics.md)
    "min": _Combine("min", _zero_tie(True), "greatest", "and"),
    "max": _Combine("max", _zero_tie(False), "least", "or"),
    "and": _Combine("and", np.bitwise_and, "all_ones", "and"),
    "or": _Combine("or", np.bitwise_or, "all_zeros", "or"),
    "xor": _Combine("xor", np.bitwise_xor, "all_zeros", "xor"),
}

#: Distances of the log-step passes, in order.
LOG_STEPS = (1, 2, 4, 8, 16)


def _lanes():
    return np.arange(WAVE)


def _gather(x, src):
    """x[w, src[w, l]] for every wave w and lane l (src already in 0..31)."""
    return np.take_along_axis(x, src, axis=1)


def _move(x, active, src):
    """The move rule: read lane src, or keep your own value if src is inactive/out of range."""
    src = np.broadcast_to(np.asarray(src, dtype=np.int64), x.shape)
    inrange = (src >= 0) & (src < WAVE)
    srcc = np.where(inrange, src, 0)
    ok = inrange & _gather(active, srcc)
    return np.where(ok, _gather(x, srcc), x)


def _bits(pred, active):
    return active & (np.asarray(pred) != 0)


def _ballot_words(pred, active):
    bits = _bits(pred, active).astype(np.uint64)
    words = (bits << _lanes().astype(np.uint64)).sum(axis=1).astype(np.uint32)
    return words


def _popcount32(a):
    a = np.asarray(a, dtype=np.uint32)
    return np.unpackbits(a.view(np.uint8).reshape(a.shape + (4,)), axis=-1).sum(axis=-1).astype(np.uint32)


def _scan_input(x, active, op: "Op"):
    x = np.asarray(x)
    dtype = op.result_dtype(x.dtype)
    v = x.astype(dtype)
    return np.where(active, v, op.combine_fn.identity(dtype)), dtype


def _inclusive_scan(v, comb):
    v = v.copy()
    for d in LOG_STEPS:
        prev = v.copy()
        v[:, d:] = comb(prev[:, :-d], prev[:, d:])
    return v


def _butterfly(v, comb):
    lanes = _lanes()
    for d in LOG_STEPS:
        v = comb(v, v[:, lanes ^ d])
    return v


# ---------------------------------------------------------------------------
# Reference implementations, one per kind
# ---------------------------------------------------------------------------


def _ref_query(op, active, shape):
    lanes = np.broadcast_to(_lanes(), shape)
    if op.query == "lane":
        return (lanes & (QUAD - 1 if op.namespace == "Quad" else WAVE - 1)).astype(_U32)
    if op.query == "width":
        return np.full(shape, WAVE, dtype=_U32)
    raise unknown_value("query", op.query, op)


def _exact_selector(op, sel):
    """The selector's exact integer value as int64: up/down distances clamped to
    +-2**40 (every distance of 32 or more leaves the wave), other selectors by
    their low 32 bits (only ``& 31``/``& 3`` of them is used). A uint64 2**64 - 1
    is 18446744073709551615 here, never -1."""
    s = np.asarray(sel)
    if s.dtype.kind not in "ui" or (s.dtype.kind == "u" and s.dtype.itemsize == 8):
        if op.sel_kind in ("up", "down"):
            conv = lambda v: max(-(2**40), min(2**40, int(v)))  # noqa: E731
        else:
            conv = lambda v: int(v) & 0xFFFFFFFF  # noqa: E731
        return np.vectorize(conv, otypes=[np.int64])(s) if s.size else s.astype(np.int64)
    return s.astype(np.int64)


def _ref_move(op, active, x, sel=None):
    lanes = np.broadcast_to(_lanes(), x.shape)
    if sel is None:
        sel = 0
    sel = np.broadcast_to(_exact_selector(op, sel), x.shape)
    if op.sel_kind == "first":
        first = np.argmax(active, axis=1)[:, None]
        src = np.broadcast_to(first, x.shape)
    else:
        src = op.pattern(lanes, sel)
    return _move(x, active, src)


def _ref_vote(op, active, pred):
    bits = _bits(pred, active)
    if op.vote == "all":
        reduce = np.all
    elif op.vote == "any":
        reduce = np.any
    else:
        raise unknown_value("vote", op.vote, op)
    if op.namespace == "Quad":
        q = bits.reshape(bits.shape[0], WAVE // QUAD, QUAD)
        return np.repeat(reduce(q, axis=2), QUAD, axis=1)
    r = reduce(bits, axis=1)
    return np.broadcast_to(r[:, None], bits.shape).copy()


def _ref_ballot(op, active, pred):
    words = _ballot_words(pred, active)
    if op.vote == "ballot":
        return np.broadcast_to(words[:, None], active.shape).copy()
    if op.vote == "count":
        return np.broadcast_to(_popcount32(words)[:, None], active.shape).copy()
    if op.vote == "prefix_count":
        # true active lanes strictly below this one
        below = ((np.uint64(1) << _lanes().astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
        return _popcount32(words[:, None] & below[None, :])
    raise unknown_value("vote", op.vote, op)


def _ref_scan(op, active, x):
    """Exclusive log-step scan over the ranks of the active lanes: the active values
    are compressed to the front (lane order), padded with the identity, scanned,
    and rank r's result goes back to the r-th active lane."""
    v, dtype = _scan_input(x, active, op)
    ident = op.combine_fn.identity(dtype)
    packed = np.full_like(v, ident)
    ranks = np.cumsum(active, axis=1) - 1
    rows, lanes = np.nonzero(active)
    packed[rows, ranks[rows, lanes]] = v[rows, lanes]
    inc = _inclusive_scan(packed, op.combine_fn)
    exc = np.empty_like(inc)
    exc[:, 0] = op.combine_fn.identity(dtype, lane0=True)
    exc[:, 1:] = inc[:, :-1]
    out = v.copy()
    out[rows, lanes] = exc[rows, ranks[rows, lanes]]
    return out


def _ref_reduce(op, active, x):
    v, _ = _scan_input(x, active, op)
    return _butterfly(v, op.combine_fn)


def _ref_all_equal(op, active, x):
    x = np.asarray(x)
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind != "b" else x
    first = np.argmax(active, axis=1)[:, None]
    ref = np.take_along_axis(bits, first, axis=1)
    same = (bits == ref) | ~active
    return np.broadcast_to(same.all(axis=1)[:, None], x.shape).copy()


def derivative_sources(op, lane):
    """(hi, lo): the lanes a derivative reads, ``hi - lo``, for *lane* (an int, a
    NumPy array or a target's integer wrapper). ``op.xor_const`` is the quad-lane bit
    of the axis (1: x, 2: y); ``fine`` reads within the lane's own row (x) or column
    (y) of the quad, ``coarse`` the quad's lane 0 and its neighbour along the axis."""
    b = op.xor_const
    if op.derivative == "fine":
        return lane | b, lane & (~b)
    if op.derivative == "coarse":
        return (lane & ~3) | b, lane & ~3
    raise unknown_value("derivative", op.derivative, op)


def _ref_derivative(op, active, x):
    """``move(hi) - move(lo)``: each read follows the move rule (an inactive source
    gives the reader's own value); one subtraction per lane."""
    x = np.asarray(x)
    hi, lo = derivative_sources(op, np.broadcast_to(_lanes(), x.shape))
    with np.errstate(over="ignore", invalid="ignore"):
        d = _move(x, active, hi) - _move(x, active, lo)
    return np.where(active, d, x)


_REFS = {
    "query": _ref_query,
    "move": _ref_move,
    "vote": _ref_vote,
    "ballot": _ref_ballot,
    "scan": _ref_scan,
    "reduce": _ref_reduce,
    "allequal": _ref_all_equal,
    "derivative": _ref_derivative,
}


# ---------------------------------------------------------------------------
# The entry type
# ---------------------------------------------------------------------------


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
    params: tuple
    summary: str
    example: str
    types: str = "value"  # operand type class: value, bitwise, pred, float
    combine: Optional[str] = None  # scans/reductions: a key of _COMBINES
    query: Optional[str] = None  # queries: "lane" or "width"
    vote: Optional[str] = None  # votes: "all", "any"; ballots: "ballot",
    #                                        "count", "prefix_count"
    pattern: Optional[Callable] = None  # moves: (lane, sel) -> source lane
    xor_const: Optional[int] = None  # moves with a fixed butterfly mask (sel_kind "xor");
    #                                        derivatives: the quad-lane bit of the axis (1: x, 2: y)
    sel_range: Optional[range] = None  # constant selectors must lie here
    sel_wrap: Optional[int] = None  # runtime selectors are taken & sel_wrap
    # moves: how the source lane depends on a selector that is the same in every
    # lane: "quad" (a lane of the quad), "lane" (one lane of the wave), "xor"
    # (lane ^ sel, or ^ xor_const), "up", "down"; "first" (the first active
    # lane: no selector, no pattern)
    sel_kind: Optional[str] = None
    # derivatives: "fine" (within the lane's row/column of the quad) or "coarse"
    # (from the quad's lane 0), see derivative_sources()
    derivative: Optional[str] = None

    def __post_init__(self):
        problem = _row_problem(self)
        if problem:
            raise ValueError(f"ops.py row {self.namespace}.{self.name}: {problem}")

    @property
    def qualname(self) -> str:
        return f"{self.namespace}.{self.name}"

    @property
    def combine_fn(self) -> _Combine:
        if self.combine not in _COMBINES:
            raise unknown_value("combine", self.combine, self)
        return _COMBINES[self.combine]

    @property
    def operand(self) -> Optional[str]:
        return self.params[0] if self.params else None

    @property
    def selector(self) -> Optional[str]:
        return self.params[1] if len(self.params) > 1 else None

    @property
    def accepted(self) -> tuple:
        """The operand dtypes this op takes."""
        return _TYPE_CLASSES[self.types] if self.params else ()

    @property
    def accepted_words(self) -> str:
        return _TYPE_CLASS_WORDS[self.types]

    def result_dtype(self, dtype=None) -> np.dtype:
        """The result dtype for an operand of *dtype*."""
        if self.kind in ("query", "ballot"):
            return _U32
        if self.kind in ("vote", "allequal"):
            return _BOOL
        dtype = np.dtype(dtype)
        if self.combine == "add" and dtype == _BOOL:
            return _U32
        return dtype

    def check_operand(self, dtype) -> Optional[str]:
        """None if *dtype* is accepted, else the complaint (without location)."""
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError):
            dt = None
        if dt is not None and dt in self.accepted:
            return None
        return (
            f"{self.qualname}({', '.join(self.params)}): argument '{self.operand}' "
            f"got {dtype}; it takes a {self.accepted_words}"
        )

    def check_selector_type(self, type_name, is_integer) -> Optional[str]:
        """None if a selector of type *type_name* (an integer when *is_integer*) is
        accepted, else the complaint (without location): one wording for every target."""
        if is_integer:
            return None
        return (
            f"{self.qualname}({', '.join(self.params)}): argument '{self.selector}' got "
            f"{type_name}; it takes an integer scalar (int8..int64, uint8..uint64), "
            f"constant or runtime"
        )

    def check_arity(self, args, keywords) -> tuple:
        """(the call's arguments in parameter order, None), or ((), the complaint) for a
        call with *args* (a list) and *keywords* ({name: value}) that does not bind to
        the op's parameters: one wording for every target."""
        args, kw = list(args), dict(keywords)
        for p in self.params[len(args) :]:
            if p in kw:
                args.append(kw.pop(p))
        if kw:
            return (), f"{self.qualname}() got unexpected keyword(s) {sorted(kw)}; it takes ({', '.join(self.params)})"
        if len(args) != len(self.params):
            return (), (
                f"{self.qualname}({', '.join(self.params)}) takes {len(self.params)} argument(s); got {len(args)}"
            )
        return args, None

    def check_selector_constant(self, value) -> Optional[str]:
        if not -(2**63) <= int(value) < 2**64:  # no integer type holds it
            return (
                f"{self.qualname}: constant {self.selector} {value} does not fit a 64-bit "
                f"integer; it takes an integer scalar"
            )
        if self.sel_range is not None and int(value) not in self.sel_range:
            if self.sel_wrap is not None:
                runtime = f"a runtime {self.selector} is taken & {self.sel_wrap}"
            else:  # shuffleUp/Down: no wrap (docs/semantics.md)
                sign = "-" if self.sel_kind == "up" else "+"
                runtime = (
                    f"a runtime {self.selector} reads lane {sign} {self.selector} in exact "
                    f"arithmetic, the lane's own value outside 0..31"
                )
            return (
                f"{self.qualname}: constant {self.selector} {value} is out of range; "
                f"it takes {self.sel_range.start}..{self.sel_range.stop - 1} ({runtime})"
            )
        return None

    def reference(self, *args, active):
        """Pure-NumPy semantics over ``(waves, 32)`` arrays; see the module doc."""
        active = np.asarray(active, dtype=bool)
        if self.kind == "query":
            return _ref_query(self, active, active.shape)
        args = [np.broadcast_to(np.asarray(a), active.shape) for a in args]
        return _REFS[self.kind](self, active, *args)

    @property
    def doc(self) -> str:
        call = f"{self.qualname}({', '.join(self.params)})"
        lines = [call, "", self.summary, "", f"Example: {self.example}"]
        return "\n".join(lines)


#: The field that selects an op within each kind, and the values it takes.
#: Every target lowers by these fields and raises :func:`unknown_value` for any
#: other value.
_KIND_FIELDS = {
    "query": ("query", ("lane", "width")),
    "move": ("sel_kind", ("quad", "lane", "xor", "up", "down", "first")),
    "vote": ("vote", ("all", "any")),
    # "match": numquad/cpu/cudaapi.py's MATCH_OP (match_any_sync), outside the
    # catalogue; it has its own whole-wave lowering there and none here
    "ballot": ("vote", ("ballot", "count", "prefix_count", "match")),
    "scan": ("combine", tuple(_COMBINES)),
    "reduce": ("combine", tuple(_COMBINES)),
    "allequal": (None, ()),
    "derivative": ("derivative", ("fine", "coarse")),
}


def _row_problem(op) -> Optional[str]:
    """What is wrong with a row's per-kind fields, or None."""
    if op.kind not in _KIND_FIELDS:
        return f"unknown kind {op.kind!r}"
    field, values = _KIND_FIELDS[op.kind]
    if field is not None and getattr(op, field) not in values:
        return f"{field}={getattr(op, field)!r}; a {op.kind} takes one of {values}"
    for other in {f for f, _ in _KIND_FIELDS.values() if f is not None} - {field}:
        if getattr(op, other) is not None:
            return f"{other} is set; a {op.kind} takes none"
    if op.kind == "derivative":
        if op.xor_const not in (1, 2) or op.namespace != "Quad" or op.types != "float" or len(op.params) != 1:
            return "a derivative is a Quad op on one float operand with xor_const 1 (x) or 2 (y)"
    elif op.xor_const is not None and (op.sel_kind != "xor" or len(op.params) != 1):
        return "xor_const is for a move with sel_kind 'xor' and no selector"
    if op.kind == "move" and (op.pattern is None) != (op.sel_kind == "first"):
        return "every move but sel_kind 'first' has a pattern"
    return None


def _xor(k):
    return lambda lane, sel: lane ^ k


_OPS = [
    # --- Quad: four consecutive lanes laneId & ~3 .. +3 ---------------------
    Op(
        "Quad",
        "laneId",
        "query",
        (),
        "This lane's index in its quad, laneId & 3, as uint32.",
        "lanes 0..7 -> 0 1 2 3 0 1 2 3",
        query="lane",
    ),
    Op(
        "Quad",
        "broadcast",
        "move",
        ("value", "index"),
        "The value of quad lane `index` (0..3). A constant index outside 0..3 is a "
        "compile error; a runtime index is taken & 3. Reading an inactive lane "
        "returns the reader's own value.",
        "value [a b c d], index 2 -> [c c c c]",
        pattern=lambda lane, sel: (lane & ~3) | (sel & 3),
        sel_range=range(4),
        sel_wrap=3,
        sel_kind="quad",
    ),
    Op(
        "Quad",
        "swapHorizontal",
        "move",
        ("value",),
        "The value of lane laneId ^ 1 (swap within each row of the 2x2 quad). "
        "Reading an inactive lane returns the reader's own value.",
        "[a b c d] -> [b a d c]",
        pattern=_xor(1),
        xor_const=1,
        sel_kind="xor",
    ),
    Op(
        "Quad",
        "swapVertical",
        "move",
        ("value",),
        "The value of lane laneId ^ 2 (swap the rows of the 2x2 quad). "
        "Reading an inactive lane returns the reader's own value.",
        "[a b c d] -> [c d a b]",
        pattern=_xor(2),
        xor_const=2,
        sel_kind="xor",
    ),
    Op(
        "Quad",
        "swapDiagonal",
        "move",
        ("value",),
        "The value of lane laneId ^ 3 (swap across the diagonal of the quad). "
        "Reading an inactive lane returns the reader's own value.",
        "[a b c d] -> [d c b a]",
        pattern=_xor(3),
        xor_const=3,
        sel_kind="xor",
    ),
    Op(
        "Quad",
        "all",
        "vote",
        ("pred",),
        "True in every lane of the quad when the predicate is true in all four lanes; inactive lanes read as false.",
        "[T T T T] -> [T T T T]; [T T F T] -> [F F F F]",
        types="pred",
        vote="all",
    ),
    Op(
        "Quad",
        "any",
        "vote",
        ("pred",),
        "True in every lane of the quad when the predicate is true in any of its lanes; inactive lanes read as false.",
        "[F F T F] -> [T T T T]",
        types="pred",
        vote="any",
    ),
    Op(
        "Quad",
        "ddx",
        "derivative",
        ("value",),
        "Fine x derivative of the 2x2 quad [0 1; 2 3]: lanes 0 and 1 get v1 - v0, lanes "
        "2 and 3 get v3 - v2 (right minus left in the lane's row), one subtraction. The "
        "row partner is read as Quad.swapHorizontal reads it: an inactive partner gives "
        "the lane's own value, so the lane gets v - v (0; NaN for an inf or NaN v). "
        "float32 or float64 only.",
        "[a b c d] -> [b-a b-a d-c d-c]",
        types="float",
        derivative="fine",
        xor_const=1,
    ),
    Op(
        "Quad",
        "ddy",
        "derivative",
        ("value",),
        "Fine y derivative of the 2x2 quad [0 1; 2 3]: lanes 0 and 2 get v2 - v0, lanes "
        "1 and 3 get v3 - v1 (bottom minus top in the lane's column), one subtraction. "
        "The column partner is read as Quad.swapVertical reads it: an inactive partner "
        "gives the lane's own value, so the lane gets v - v (0; NaN for an inf or NaN v). "
        "float32 or float64 only.",
        "[a b c d] -> [c-a d-b c-a d-b]",
        types="float",
        derivative="fine",
        xor_const=2,
    ),
    Op(
        "Quad",
        "ddxCoarse",
        "derivative",
        ("value",),
        "Coarse x derivative of the 2x2 quad [0 1; 2 3]: every lane gets v1 - v0 (the "
        "top row's), one subtraction. v1 and v0 are read as Quad.broadcast reads them: "
        "an inactive quad lane 0 or 1 gives the reader's own value (lane 0 inactive: "
        "lane 1 gets v1 - v1, lane 2 v1 - v2). float32 or float64 only.",
        "[a b c d] -> [b-a b-a b-a b-a]",
        types="float",
        derivative="coarse",
        xor_const=1,
    ),
    Op(
        "Quad",
        "ddyCoarse",
        "derivative",
        ("value",),
        "Coarse y derivative of the 2x2 quad [0 1; 2 3]: every lane gets v2 - v0 (the "
        "left column's), one subtraction. v2 and v0 are read as Quad.broadcast reads "
        "them: an inactive quad lane 0 or 2 gives the reader's own value (lane 0 "
        "inactive: lane 2 gets v2 - v2, lane 1 v2 - v1). float32 or float64 only.",
        "[a b c d] -> [c-a c-a c-a c-a]",
        types="float",
        derivative="coarse",
        xor_const=2,
    ),
    # --- Wave: 32 lanes ------------------------------------------------------
    Op("Wave", "laneId", "query", (), "This lane's index in its wave, 0..31, as uint32.", "lane 5 -> 5", query="lane"),
    Op(
        "Wave",
        "width",
        "query",
        (),
        "The number of lanes in a wave: 32 on every target, as uint32.",
        "-> 32",
        query="width",
    ),
    Op(
        "Wave",
        "prefixSum",
        "scan",
        ("value",),
        "Exclusive sum over the active lanes below this one (the lowest active lane gets 0); "
        "inactive lanes are skipped. Integers wrap; a bool counts true lanes "
        "(uint32); floats add in the fixed log-step order.",
        "[1 2 3 4 ...] -> [0 1 3 6 ...]",
        combine="add",
    ),
    Op(
        "Wave",
        "prefixProduct",
        "scan",
        ("value",),
        "Exclusive product over the active lanes below this one (the lowest active lane gets 1); "
        "inactive lanes are skipped.",
        "[2 3 4 5 ...] -> [1 2 6 24 ...]",
        combine="mul",
    ),
    Op(
        "Wave",
        "ballot",
        "ballot",
        ("pred",),
        "A uint32 whose bit i is set when lane i is active and its predicate is true; the same word in every lane.",
        "pred true in lanes 0 and 3 -> 0b1001 = 9",
        types="pred",
        vote="ballot",
    ),
    Op(
        "Wave",
        "any",
        "vote",
        ("pred",),
        "True in every lane when the predicate is true in any active lane.",
        "[F F T F ...] -> [T T T T ...]",
        types="pred",
        vote="any",
    ),
    Op(
        "Wave",
        "all",
        "vote",
        ("pred",),
        "True in every lane when the predicate is true in all 32 lanes; inactive "
        "lanes read as false, so a partial wave gives false.",
        "[T T T ... T] -> [T T T ... T]",
        types="pred",
        vote="all",
    ),
    # --- Wave: the full surface ---------------------------------------------
    Op(
        "Wave",
        "reduceSum",
        "reduce",
        ("value",),
        "Sum over the active lanes, in every active lane (butterfly order for floats).",
        "[1 2 3 4 ...] -> [S S S S ...]",
        combine="add",
    ),
    Op(
        "Wave",
        "reduceProduct",
        "reduce",
        ("value",),
        "Product over the active lanes, in every active lane.",
        "[1 2 3 ...] -> [P P P ...]",
        combine="mul",
    ),
    Op(
        "Wave",
        "reduceMin",
        "reduce",
        ("value",),
        "Minimum over the active lanes, in every active lane (a NaN loses to a number; "
        "inactive lanes count as +inf for floats, so all-NaN active lanes of a partial "
        "wave give +inf, a full wave NaN).",
        "[3 1 2 ...] -> [1 1 1 ...]",
        combine="min",
    ),
    Op(
        "Wave",
        "reduceMax",
        "reduce",
        ("value",),
        "Maximum over the active lanes, in every active lane (a NaN loses to a number; "
        "inactive lanes count as -inf for floats, so all-NaN active lanes of a partial "
        "wave give -inf, a full wave NaN).",
        "[3 1 2 ...] -> [3 3 3 ...]",
        combine="max",
    ),
    Op(
        "Wave",
        "reduceAnd",
        "reduce",
        ("value",),
        "Bitwise AND over the active lanes, in every active lane.",
        "[6 3 7 ...] -> [2 2 2 ...]",
        types="bitwise",
        combine="and",
    ),
    Op(
        "Wave",
        "reduceOr",
        "reduce",
        ("value",),
        "Bitwise OR over the active lanes, in every active lane.",
        "[1 2 4 ...] -> [7 7 7 ...]",
        types="bitwise",
        combine="or",
    ),
    Op(
        "Wave",
        "reduceXor",
        "reduce",
        ("value",),
        "Bitwise XOR over the active lanes, in every active lane.",
        "[1 3 4 ...] -> [6 6 6 ...]",
        types="bitwise",
        combine="xor",
    ),
    Op(
        "Wave",
        "prefixMin",
        "scan",
        ("value",),
        "Exclusive minimum over the active lanes below this one (the lowest active lane gets the "
        "type's maximum, +inf for floats; a NaN loses to a number, so a lane gets NaN only where "
        "every active lane below it holds NaN).",
        "[3 1 2 ...] -> [MAX 3 1 ...]",
        combine="min",
    ),
    Op(
        "Wave",
        "prefixMax",
        "scan",
        ("value",),
        "Exclusive maximum over the active lanes below this one (the lowest active lane gets the "
        "type's minimum, -inf for floats; a NaN loses to a number, so a lane gets NaN only where "
        "every active lane below it holds NaN).",
        "[3 1 4 ...] -> [MIN 3 3 ...]",
        combine="max",
    ),
    Op(
        "Wave",
        "prefixAnd",
        "scan",
        ("value",),
        "Exclusive bitwise AND over the active lanes below this one (the lowest active lane gets all ones).",
        "[7 6 4 ...] -> [~0 7 6 ...]",
        types="bitwise",
        combine="and",
    ),
    Op(
        "Wave",
        "prefixOr",
        "scan",
        ("value",),
        "Exclusive bitwise OR over the active lanes below this one (the lowest active lane gets 0).",
        "[1 2 4 ...] -> [0 1 3 ...]",
        types="bitwise",
        combine="or",
    ),
    Op(
        "Wave",
        "prefixXor",
        "scan",
        ("value",),
        "Exclusive bitwise XOR over the active lanes below this one (the lowest active lane gets 0).",
        "[1 3 4 ...] -> [0 1 2 ...]",
        types="bitwise",
        combine="xor",
    ),
    Op(
        "Wave",
        "countBits",
        "ballot",
        ("pred",),
        "The number of active lanes whose predicate is true (uint32), in every lane.",
        "[T F T T ...] -> [3 3 3 3 ...]",
        types="pred",
        vote="count",
    ),
    Op(
        "Wave",
        "prefixCountBits",
        "ballot",
        ("pred",),
        "The number of active lanes below this one whose predicate is true (uint32).",
        "[T F T T ...] -> [0 1 1 2 ...]",
        types="pred",
        vote="prefix_count",
    ),
    Op(
        "Wave",
        "broadcast",
        "move",
        ("value", "lane"),
        "The value of lane `lane` (taken & 31); reading an inactive lane returns the reader's own value.",
        "[a b c d ...], lane 2 -> [c c c c ...]",
        pattern=lambda lane, sel: sel & 31,
        sel_range=range(32),
        sel_wrap=31,
        sel_kind="lane",
    ),
    Op(
        "Wave",
        "readFirst",
        "move",
        ("value",),
        "The value of the first (lowest) active lane.",
        "lanes 0,1 inactive: [- - c d ...] -> [- - c c ...]",
        sel_kind="first",
    ),
    Op(
        "Wave",
        "shuffle",
        "move",
        ("value", "srcLane"),
        "The value of lane srcLane & 31 (each lane may name its own source); "
        "reading an inactive lane returns the reader's own value.",
        "[a b c d], srcLane [3 2 1 0] -> [d c b a]",
        pattern=lambda lane, sel: sel & 31,
        sel_wrap=31,
        sel_kind="lane",
    ),
    Op(
        "Wave",
        "shuffleXor",
        "move",
        ("value", "laneMask"),
        "The value of lane laneId ^ (laneMask & 31); reading an inactive lane returns the reader's own value.",
        "[a b c d], laneMask 1 -> [b a d c]",
        pattern=lambda lane, sel: lane ^ (sel & 31),
        sel_range=range(32),
        sel_wrap=31,
        sel_kind="xor",
    ),
    Op(
        "Wave",
        "shuffleUp",
        "move",
        ("value", "delta"),
        "The value of lane laneId - delta; a source below lane 0 (or inactive) gives the lane's own value.",
        "[a b c d], delta 1 -> [a a b c]",
        pattern=lambda lane, sel: lane - sel,
        sel_range=range(32),
        sel_kind="up",
    ),
    Op(
        "Wave",
        "shuffleDown",
        "move",
        ("value", "delta"),
        "The value of lane laneId + delta; a source above lane 31 (or inactive) gives the lane's own value.",
        "[a b c d], delta 1 -> [b c d d] (in a 4-lane wave)",
        pattern=lambda lane, sel: lane + sel,
        sel_range=range(32),
        sel_kind="down",
    ),
    Op(
        "Wave",
        "allEqual",
        "allequal",
        ("value",),
        "True in every lane when all active lanes hold the same bits.",
        "[5 5 5 ...] -> [T T T ...]",
    ),
]

#: Every op, by qualified name ("Quad.swapHorizontal").
OPS = {op.qualname: op for op in _OPS}


def get(qualname: str) -> Op:
    """The :class:`Op` named *qualname*, e.g. ``"Wave.prefixSum"``."""
    return OPS[qualname]


def quad_move(sel_kind: str, xor_const: Optional[int] = None) -> Op:
    """The Quad move row with these fields (``("xor", 1)``: the horizontal swap;
    ``("quad",)``: the broadcast): the moves a derivative is lowered with."""
    for op in _OPS:
        if op.namespace == "Quad" and op.kind == "move" and op.sel_kind == sel_kind and op.xor_const == xor_const:
            return op
    raise unknown_value("sel_kind", (sel_kind, xor_const))


# ---------------------------------------------------------------------------
# The user-facing namespaces: Quad and Wave
# ---------------------------------------------------------------------------


class _OpFunction:
    """The object users call as ``Quad.swapHorizontal(v)`` inside a kernel.

    It only exists to be recognised by the targets; called from plain Python it
    explains where it can be used.
    """

    def __init__(self, op: Op):
        self.op = op
        self.__doc__ = op.doc
        self.__name__ = op.name
        self.__qualname__ = op.qualname
        self.__module__ = "numquad"

    def __call__(self, *args, **kwargs):
        from ._sites import at_user_site

        raise TypeError(
            at_user_site(
                f"{self.op.qualname}({', '.join(self.op.params)}) is a cross-lane op, called here from "
                f"plain Python; it runs inside an @xpu.jit kernel or lane function (a lane function "
                f"runs on arrays: f(x))"
            )
        )

    def __repr__(self):
        return f"<numquad op {self.op.qualname}>"

    def __reduce__(self):
        return (of_function_name, (self.op.qualname,))


def of_function_name(qualname):
    ns, name = qualname.split(".")
    return getattr(globals()[ns], name)


class _Namespace(_pytypes.ModuleType):
    """A module object (so Numba types it as a module) holding one group of ops."""

    def __repr__(self):
        return f"<numquad namespace {self.__name__}>"


def _make_namespace(name, doc):
    ns = _Namespace(f"numquad.{name}", doc)
    names = []
    for op in _OPS:
        if op.namespace == name:
            setattr(ns, op.name, _OpFunction(op))
            names.append(op.name)
    ns.__all__ = names
    return ns


Quad = _make_namespace(
    "Quad",
    "Quad ops: each quad is four consecutive lanes (laneId & ~3 .. +3), seen as a 2x2 block [0 1; 2 3].",
)
Wave = _make_namespace(
    "Wave",
    "Wave ops: a wave is 32 consecutive threads of a block by linear thread id.",
)


def of_function(obj) -> Optional[Op]:
    """The :class:`Op` behind a ``Quad.*``/``Wave.*`` object, else None."""
    return obj.op if isinstance(obj, _OpFunction) else None


def function_for(op: Op):
    """A callable object that stands for *op* in kernels as ``Wave.*`` objects do
    (:func:`of_function` gives *op* back), for an op outside the namespaces."""
    return _OpFunction(op)


def is_namespace(obj) -> bool:
    """Is *obj* one of the op namespaces (``Quad``, ``Wave``)?"""
    return isinstance(obj, _Namespace)
