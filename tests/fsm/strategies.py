"""Hypothesis strategies shared by the fsm tests."""

from __future__ import annotations

from hypothesis import strategies as st


def small_regexes() -> st.SearchStrategy[str]:
    """Regexes over ``a``, ``b``, ``c`` built from concatenation, union, repetition and
    counts (at most 6 leaves): every one matches some string."""

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
            inner.map(lambda p: f"(?:{p})*"),
            inner.map(lambda p: f"(?:{p})+"),
            inner.map(lambda p: f"(?:{p})?"),
            st.tuples(inner, st.integers(1, 3)).map(lambda p: f"(?:{p[0]}){{{p[1]}}}"),
        )

    return st.recursive(st.sampled_from(["a", "b", "c", "[ab]", "[bc]"]), extend, max_leaves=6)
