"""Hypothesis strategies shared by the fsm tests."""

from __future__ import annotations

from hypothesis import strategies as st


def small_regexes(
    leaves: tuple[str, ...] = ("a", "b", "c", "[ab]", "[bc]"),
    *,
    max_leaves: int = 6,
    count_ranges: bool = False,
) -> st.SearchStrategy[str]:
    """Regexes over ``leaves`` (by default ``a``, ``b``, ``c`` and two classes) built
    from concatenation, union, repetition and counts (at most ``max_leaves`` leaves):
    every one matches some string. ``count_ranges`` adds ``{m,n}`` and ``{m,}``."""

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        forms = [
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
            inner.map(lambda p: f"(?:{p})*"),
            inner.map(lambda p: f"(?:{p})+"),
            inner.map(lambda p: f"(?:{p})?"),
            st.tuples(inner, st.integers(1, 3)).map(lambda p: f"(?:{p[0]}){{{p[1]}}}"),
        ]
        if count_ranges:
            forms.append(
                st.tuples(inner, st.integers(0, 3), st.integers(0, 2)).map(
                    lambda p: f"(?:{p[0]}){{{p[1]},{p[1] + p[2]}}}"
                )
            )
            forms.append(
                st.tuples(inner, st.integers(0, 3)).map(lambda p: f"(?:{p[0]}){{{p[1]},}}")
            )
        return st.one_of(*forms)

    return st.recursive(st.sampled_from(leaves), extend, max_leaves=max_leaves)
