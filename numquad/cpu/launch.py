"""Launching CPU wave code: every block of the grid, spread over all cores.

The launcher is a small ``parallel=True`` Numba function whose ``prange`` over
blocks runs on Numba's threading layer (so ``NUMBA_NUM_THREADS`` and
``numba.set_num_threads`` apply); each block runs its waves in order.
"""

from __future__ import annotations

import ast

import numba

from . import codegen as _cg

__all__ = ["make_launcher"]

_TEMPLATE = """
def _nq_launch({params}_nq_gdx, _nq_gdy, _nq_gdz, _nq_bdx, _nq_bdy, _nq_bdz):
    _nq_nb = _nq_gdx * _nq_gdy * _nq_gdz
    for _nq_b in _nq_prange(_nq_nb):
        _nq_bix = _nq_b % _nq_gdx
        _nq_r = _nq_b // _nq_gdx
        _nq_biy = _nq_r % _nq_gdy
        _nq_biz = _nq_r // _nq_gdy
        _nq_block({params}_nq_bix, _nq_biy, _nq_biz, _nq_bdx, _nq_bdy, _nq_bdz,
                  _nq_gdx, _nq_gdy, _nq_gdz)
"""


def make_launcher(fe, block, argtypes):
    """A compiled ``launch(*args, gx, gy, gz, bx, by, bz)`` for the block function."""
    params = "".join(f"{p}, " for p in fe.env.params)
    src = _TEMPLATE.format(params=params)
    ns = {"_nq_prange": numba.prange, "_nq_block": block}
    code = compile(ast.parse(src), f"<numquad launcher for {fe.pyfunc.__name__}>", "exec")
    exec(code, ns)
    launcher = numba.njit(ns["_nq_launch"], parallel=True, error_model="numpy")
    launcher.compile(tuple(argtypes) + (numba.types.int64,) * 6)
    return launcher
