"""Kernels that turn one automaton state into its row of the token index.

Each numba kernel has a plain-Python twin with the same output, used by the tests to
check the kernel (and readable as its specification). The kernels only read arrays:
the automaton's transition table, a flag per state telling whether its row of the
table is known yet, and the flat token trie (see ``fsm.trie``); ``walk_trie_counting``
walks a length-bounded string's unit automaton with a count (``fsm.counted``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fsm.kernel_types import (
    INT,
    READS_BOOL,
    READS_INT32,
    READS_INT32_TABLE,
    READS_UINT8,
    WRITES_INT32,
)


@njit(inline="always")
def _walk_outputs(roots, ends, token_starts):
    """A trie walk's outputs, sized for every token and node below ``roots`` (a subtree
    is a run of preorder positions), so the loop never grows them: growing arrays that
    the loop reassigns made a walk of the whole trie twice as slow; only the used part
    is copied out, so a row keeps arrays of its own length, not the vocabulary's. The
    tokens' arrays have one slot more: a node's first is written before its count is
    known. Returns ``(tokens, values, pending nodes, pending values)``."""
    most_tokens = 0
    most_nodes = 0
    for r in range(roots.shape[0]):
        most_tokens += token_starts[ends[roots[r]]] - token_starts[roots[r]]
        most_nodes += ends[roots[r]] - roots[r]
    return (
        np.empty(most_tokens + 1, np.int32),
        np.empty(most_tokens + 1, np.int32),
        np.empty(most_nodes, np.int32),
        np.empty(most_nodes, np.int32),
    )


@njit(inline="always")
def _report_tokens(out_tokens, out_values, found, node, value, token_starts, token_ids):
    """Writes the tokens that end at ``node``, each with ``value``, from ``found`` on;
    returns the new count. The first slot is written whether or not the node ends a
    token (it counts only if it does): the branch a walk would mispredict at about
    every other node is taken out of its loop."""
    first = token_starts[node]
    count = token_starts[node + 1] - first
    if token_ids.shape[0] > 0:
        out_tokens[found] = token_ids[min(first, token_ids.shape[0] - 1)]
    out_values[found] = value
    for k in range(1, count):  # a node that ends several tokens (rare)
        out_tokens[found + k] = token_ids[first + k]
        out_values[found + k] = value
    return found + count


@njit(inline="always")
def _walk_result(out_tokens, out_values, found, pending_nodes, pending_values, pending):
    """The used part of a trie walk's outputs (``_walk_outputs``), copied out."""
    return (
        out_tokens[:found].copy(),
        out_values[:found].copy(),
        pending_nodes[:pending].copy(),
        pending_values[:pending].copy(),
    )


@njit(
    (
        READS_INT32_TABLE,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_UINT8,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_BOOL,
        INT,
    ),
    cache=True,
    nogil=True,
)
def walk_trie(
    table,
    row_of,
    roots,
    root_states,
    labels,
    depths,
    ends,
    token_starts,
    token_ids,
    stops,
    max_depth,
):
    """Tokens read without dying below each ``roots[i]``, entered in ``root_states[i]``.

    ``table`` holds a row of 256 successors per expanded state, ``row_of[state]`` the
    state's row (-1: not expanded yet). Walks the subtree of each root node (not the
    root itself: its tokens were reported by the walk that reached it) in preorder,
    keeping the state of each open node in a stack indexed by depth; node 0 walks the
    whole trie. A dead byte prunes the node's whole subtree; so does a live state not
    expanded yet (or past ``row_of``) when the node has children: the node and its
    state are reported, so the caller can expand the state and resume the walk below
    that node alone (every node is visited once in all). A root whose state is not
    expanded is reported the same way. A state flagged in ``stops`` (a flag per state;
    states past its end are not flagged) is reported and pruned like an unexpanded state
    at a node below a root: a lexeme walk stops where the lexeme may end (its
    continuation takes over below those nodes) and, where the lexeme may also go on,
    resumes below them itself. ``max_depth`` is ``depths.max()`` (the trie's, passed in:
    the kernel is called per pending state).

    Returns ``(token_ids, end_states, pending_nodes, pending_states)``; tokens in trie
    order within each root."""
    num_known = row_of.shape[0]
    num_flagged = stops.shape[0]
    out_tokens, out_states, pending_nodes, pending_states = _walk_outputs(roots, ends, token_starts)
    # where the open nodes' rows start in the flattened table: unsigned offsets index
    # without the wraparound test signed indices take
    stack = np.empty(max_depth + 1, np.uint64)
    flat = table.ravel()
    width = np.uint64(table.shape[1])
    found = 0
    pending = 0
    for r in range(roots.shape[0]):
        root = roots[r]
        if root_states[r] >= num_known or row_of[root_states[r]] < 0:
            pending_nodes[pending] = root
            pending_states[pending] = root_states[r]
            pending += 1
            continue
        stack[depths[root]] = np.uint64(row_of[root_states[r]]) * width
        node = root + 1
        stop = ends[root]
        # Two branches the walk would mispredict at about every other node are taken
        # out of the loop (the walk of a whole trie took 0.9 ms, half of it there):
        # whether a node ends a token (``_report_tokens``) and whether it has children
        # (the row of its state goes on the stack anyway, row 0 for one not expanded;
        # only nodes below it read it, and below a node not expanded the walk does
        # not go).
        while node < stop:
            depth = depths[node]
            state = flat[stack[depth - 1] + np.uint64(labels[node])]
            if state < 0:
                node = ends[node]
                continue
            found = _report_tokens(
                out_tokens, out_states, found, node, state, token_starts, token_ids
            )
            row = row_of[state] if state < num_known else -1
            stack[depth] = np.uint64(max(row, 0)) * width
            if row < 0 or (state < num_flagged and stops[state]):
                if ends[node] > node + 1:
                    pending_nodes[pending] = node
                    pending_states[pending] = state
                    pending += 1
                    node = ends[node]
                    continue
            node += 1
    return _walk_result(out_tokens, out_states, found, pending_nodes, pending_states, pending)


def walk_trie_py(
    table,
    row_of,
    roots,
    root_states,
    labels,
    depths,
    ends,
    token_starts,
    token_ids,
    stops,
    max_depth,
):
    """Plain-Python twin of ``walk_trie``."""
    out_tokens: list[int] = []
    out_states: list[int] = []
    pending_nodes: list[int] = []
    pending_states: list[int] = []

    def expanded(state: int) -> bool:
        return state < len(row_of) and row_of[state] >= 0

    stack = [0] * (max_depth + 1)  # the open nodes' states
    for root, root_state in zip(roots.tolist(), root_states.tolist(), strict=True):
        if not expanded(root_state):
            pending_nodes.append(root)
            pending_states.append(root_state)
            continue
        stack[int(depths[root])] = root_state
        node = root + 1
        while node < ends[root]:
            depth = int(depths[node])
            state = int(table[row_of[stack[depth - 1]], labels[node]])
            if state < 0:
                node = int(ends[node])
                continue
            for k in range(token_starts[node], token_starts[node + 1]):
                out_tokens.append(int(token_ids[k]))
                out_states.append(state)
            if ends[node] > node + 1:
                flagged = state < len(stops) and bool(stops[state])
                if flagged or not expanded(state):
                    pending_nodes.append(node)
                    pending_states.append(state)
                    node = int(ends[node])
                    continue
                stack[depth] = state
            node += 1
    return tuple(
        np.asarray(values, np.int32)
        for values in (out_tokens, out_states, pending_nodes, pending_states)
    )


@njit((READS_INT32, INT), cache=True, nogil=True)
def pack_bitmask(tokens, words):
    """int32[words] with bit ``t % 32`` of word ``t // 32`` set for each token ``t``."""
    mask = np.zeros(words, np.uint32)
    for token in tokens:
        mask[token >> 5] |= np.uint32(1) << np.uint32(token & 31)
    return mask.view(np.int32)


def pack_bitmask_py(tokens, words):
    """Plain-Python twin of ``pack_bitmask``."""
    mask = [0] * words
    for token in tokens.tolist():
        mask[token // 32] |= 1 << (token % 32)
    return np.asarray(mask, np.uint32).view(np.int32)


@njit((READS_INT32, READS_INT32), cache=True, nogil=True)
def pack_onto(mask, tokens):
    """A copy of the packed ``mask`` with each of ``tokens`` set too: a row's mask is a
    big block's mask with its few other tokens added, in one call."""
    out = mask.copy()
    bits = out.view(np.uint32)
    for token in tokens:
        bits[token >> 5] |= np.uint32(1) << np.uint32(token & 31)
    return out


def pack_onto_py(mask, tokens):
    """Plain-Python twin of ``pack_onto``."""
    return mask | pack_bitmask_py(tokens, len(mask))


SCAN_CHUNK = 512
"""``position_of`` tests this many tokens at a time without a branch per token,
which the compiler vectorises (3-5x faster than stopping at each)."""


@njit(cache=True, nogil=True)
def _chunk_holds(tokens, token, start, stop):
    hit = 0
    for i in range(start, stop):
        hit |= tokens[i] == token
    return hit != 0


@njit((READS_INT32, INT), cache=True, nogil=True)
def position_of(tokens, token):
    """The first position of ``token`` in ``tokens`` (-1: absent): a row looks up the
    one token a step takes in a block of a string's ~48,800 tokens, once."""
    count = tokens.shape[0]
    for start in range(0, count, SCAN_CHUNK):
        stop = min(start + SCAN_CHUNK, count)
        if _chunk_holds(tokens, token, start, stop):
            for i in range(start, stop):
                if tokens[i] == token:
                    return i
    return -1


def position_of_py(tokens, token):
    """Plain-Python twin of ``position_of``."""
    listed = tokens.tolist()
    return listed.index(token) if token in listed else -1


@njit((READS_INT32, READS_INT32, INT), cache=True, nogil=True)
def search_trie_order(tokens, token_nodes, token):
    """The position of ``token`` among distinct ``tokens`` in trie order (their nodes,
    ``token_nodes[tokens]``, ascending: how a walk hands them out), -1 when absent: a
    binary search over the nodes, then the few ids that share the token's node."""
    node = token_nodes[token]
    low, high = 0, tokens.shape[0]
    while low < high:
        middle = (low + high) >> 1
        if token_nodes[tokens[middle]] < node:
            low = middle + 1
        else:
            high = middle
    while low < tokens.shape[0] and token_nodes[tokens[low]] == node:
        if tokens[low] == token:
            return low
        low += 1
    return -1


@njit((READS_INT32, READS_INT32, INT), cache=True, nogil=True)
def position_in_trie_order(tokens, token_nodes, token):
    """The position of ``token`` among distinct ``tokens`` (-1: absent): by
    ``search_trie_order``, so a step's token is found among a string's ~48,800 in ~16
    probes instead of a scan, and by a scan (``position_of``) where the search misses,
    which keeps it exact whatever the order."""
    found = search_trie_order(tokens, token_nodes, token)
    return found if found >= 0 else position_of(tokens, token)


@njit((INT, INT), cache=True, nogil=True)
def is_sparse(count, vocab_size):
    """Whether ``count`` tokens are few enough against the vocabulary (under a
    sixteenth) that sorting them beats a pass over a vocabulary-sized array."""
    return count * 16 < vocab_size


ABSENT = np.int32(-(2**31))
"""``scatter_*``: a token no block reads (never a target: states are >= 0, deferred
joins' codes a little below -1)."""


@njit((WRITES_INT32, READS_INT32, READS_INT32, READS_INT32), cache=True, nogil=True)
def scatter_targets(target_of, tokens, inverse, targets):
    """``target_of[tokens[i]] = targets[inverse[i]]``: a block of a row, into a
    vocabulary-sized array (``read_row`` reads the row back in token order)."""
    for i in range(tokens.shape[0]):
        target_of[tokens[i]] = targets[inverse[i]]


@njit((WRITES_INT32, READS_INT32, READS_INT32), cache=True, nogil=True)
def scatter_plain(target_of, tokens, targets):
    """``target_of[tokens[i]] = targets[i]`` (a block whose targets are aligned)."""
    for i in range(tokens.shape[0]):
        target_of[tokens[i]] = targets[i]


@njit((READS_INT32, INT), cache=True, nogil=True)
def read_row(target_of, count):
    """The ``count`` tokens of ``target_of`` not ``ABSENT``, ascending, their targets,
    and their packed int32 mask (layout of ``pack_bitmask``, one word per 32 entries of
    ``target_of``, whose size is a multiple of 32): one pass, for rows that read most
    of the vocabulary."""
    words = target_of.shape[0] // 32
    tokens = np.empty(count, np.int32)
    targets = np.empty(count, np.int32)
    mask = np.empty(words, np.uint32)
    found = 0
    for word in range(words):
        bits = np.uint32(0)
        for bit in range(32):
            token = word * 32 + bit
            target = target_of[token]
            if target != ABSENT:
                tokens[found] = token
                targets[found] = target
                found += 1
                bits |= np.uint32(1) << np.uint32(bit)
        mask[word] = bits
    return tokens, targets, mask.view(np.int32)


def scatter_targets_py(target_of, tokens, inverse, targets):
    """Plain-Python twin of ``scatter_targets``."""
    for token, position in zip(tokens.tolist(), inverse.tolist(), strict=True):
        target_of[token] = targets[position]


def scatter_plain_py(target_of, tokens, targets):
    """Plain-Python twin of ``scatter_plain``."""
    for token, target in zip(tokens.tolist(), targets.tolist(), strict=True):
        target_of[token] = target


def read_row_py(target_of, count):
    """Plain-Python twin of ``read_row``."""
    tokens = [token for token, target in enumerate(target_of.tolist()) if target != ABSENT]
    assert len(tokens) == count
    return (
        np.asarray(tokens, np.int32),
        target_of[tokens].astype(np.int32),
        pack_bitmask_py(np.asarray(tokens, np.int32), len(target_of) // 32),
    )


@njit((READS_INT32, INT), cache=True, nogil=True)
def read_by_several(tokens, vocab_size):
    """Ascending positions ``i`` whose ``tokens[i]`` occurs more than once in ``tokens``
    (ids below ``vocab_size``): the tokens several branches of a union read."""
    count = np.zeros(vocab_size, np.int32)
    for token in tokens:
        count[token] += 1
    out = np.empty(tokens.shape[0], np.int64)
    k = 0
    for i in range(tokens.shape[0]):
        if count[tokens[i]] > 1:
            out[k] = i
            k += 1
    return out[:k]


def read_by_several_py(tokens, vocab_size):
    """Plain-Python twin of ``read_by_several``."""
    listed = tokens.tolist()
    count = {token: listed.count(token) for token in set(listed)}
    return np.asarray([i for i, token in enumerate(listed) if count[token] > 1], np.int64)


@njit(cache=True, nogil=True)
def _by_token(tokens, vocab_size):
    """Positions of ``tokens`` in ascending (stable) token order: a sort when they are
    few against the vocabulary (``is_sparse``), else a counting sort."""
    count = tokens.shape[0]
    if is_sparse(count, vocab_size):
        return np.argsort(tokens, kind="mergesort")
    starts = np.zeros(vocab_size + 1, np.int64)
    for token in tokens:
        starts[token + 1] += 1
    for token in range(vocab_size):
        starts[token + 1] += starts[token]
    order = np.empty(count, np.int64)
    for i in range(count):
        order[starts[tokens[i]]] = i
        starts[tokens[i]] += 1
    return order


@njit(cache=True, nogil=True)
def _sorted_group(tokens, ends, order, lo, group):
    """The distinct ends of the token at ``order[lo]``, ascending, into ``group``
    (insertion sort: a group holds a few ends); ``(their count, the next token's lo)``."""
    token = tokens[order[lo]]
    size = 0
    while lo < tokens.shape[0] and tokens[order[lo]] == token:
        end = ends[order[lo]]
        at = size
        while at > 0 and group[at - 1] > end:
            at -= 1
        if at == 0 or group[at - 1] != end:
            for k in range(size, at, -1):
                group[k] = group[k - 1]
            group[at] = end
            size += 1
        lo += 1
    return size, lo


@njit(cache=True, nogil=True)
def _group_number(group, size, table, offsets, values, groups):
    """The number of ``group[:size]`` among the ``groups`` stored in ``values`` (by
    ``offsets``), found through the open-addressing ``table``; stored as number
    ``groups`` when new."""
    slots = table.shape[0]
    digest = np.uint64(size)
    for k in range(size):
        digest = (digest * np.uint64(1000003)) ^ np.uint64(np.int64(group[k]) & 0xFFFFFFFF)
    slot = np.int64(digest & np.uint64(slots - 1))
    while table[slot] >= 0:
        known = table[slot]
        start = offsets[known]
        same = offsets[known + 1] - start == size
        k = 0
        while same and k < size:
            same = values[start + k] == group[k]
            k += 1
        if same:
            return known
        slot = (slot + 1) & (slots - 1)
    table[slot] = groups
    start = offsets[groups]
    values[start : start + size] = group[:size]
    offsets[groups + 1] = start + size
    return groups


@njit((READS_INT32, READS_INT32, INT), cache=True, nogil=True)
def group_by_token(tokens, ends, vocab_size):
    """``(token, end)`` pairs grouped by token: ``(distinct, inverse, offsets, values)``
    where ``distinct`` holds the tokens ascending and ``distinct[i]`` reads the ends
    ``values[offsets[c]:offsets[c + 1]]`` (ascending, without repeats) for
    ``c = inverse[i]``; equal groups share one ``c``, numbered in order of first use.

    The tokens several branches of a union read, with where each branch leads: one
    pass to bucket the pairs by token, one over the buckets, each sorted in place (a
    few ends) and looked up in an open-addressing table of the groups met so far."""
    count = tokens.shape[0]
    order = _by_token(tokens, vocab_size)
    distinct = np.empty(count, np.int32)
    inverse = np.empty(count, np.int32)
    offsets = np.zeros(count + 1, np.int64)
    values = np.empty(count, np.int32)
    slots = 1
    while slots < 2 * count:
        slots *= 2
    table = np.full(slots, -1, np.int64)
    group = np.empty(count, np.int32)
    found = groups = lo = 0
    while lo < count:
        token = tokens[order[lo]]
        size, lo = _sorted_group(tokens, ends, order, lo, group)
        known = _group_number(group, size, table, offsets, values, groups)
        groups = max(groups, known + 1)
        distinct[found] = token
        inverse[found] = known
        found += 1
    return distinct[:found], inverse[:found], offsets[: groups + 1], values[: offsets[groups]]


def group_by_token_py(tokens, ends, vocab_size):
    """Plain-Python twin of ``group_by_token``."""
    by_token: dict[int, set[int]] = {}
    for token, end in zip(tokens.tolist(), ends.tolist(), strict=True):
        by_token.setdefault(token, set()).add(end)
    numbered: dict[tuple[int, ...], int] = {}
    distinct = sorted(by_token)
    inverse = [numbered.setdefault(tuple(sorted(by_token[t])), len(numbered)) for t in distinct]
    offsets = np.cumsum([0] + [len(group) for group in numbered]).astype(np.int64)
    values = [end for group in numbered for end in group]
    return (
        np.asarray(distinct, np.int32),
        np.asarray(inverse, np.int32),
        offsets,
        np.asarray(values, np.int32),
    )


@njit(cache=True, nogil=True)
def _merged_ranges(starts, stops):
    """The union of the ranges ``[starts[k], stops[k])`` as disjoint ranges, ascending."""
    order = np.argsort(starts)
    merged_starts = np.empty(starts.shape[0], np.int64)
    merged_stops = np.empty(starts.shape[0], np.int64)
    count = 0
    for k in range(order.shape[0]):
        start, stop = starts[order[k]], stops[order[k]]
        if count > 0 and start <= merged_stops[count - 1]:
            merged_stops[count - 1] = max(merged_stops[count - 1], stop)
        else:
            merged_starts[count] = start
            merged_stops[count] = stop
            count += 1
    return merged_starts[:count], merged_stops[:count]


@njit(cache=True, nogil=True)
def _outside(values, starts, stops):
    """``values`` in none of the disjoint ascending ranges ``[starts[k], stops[k])``."""
    out = np.empty(values.shape[0], np.int32)
    left = 0
    for i in range(values.shape[0]):
        k = np.searchsorted(starts, values[i], side="right") - 1
        if k < 0 or values[i] >= stops[k]:
            out[left] = values[i]
            left += 1
    return out[:left]


@njit(cache=True, nogil=True)
def _cleared(mask, tokens, first, last):
    """A copy of the packed ``mask`` (empty: none) less the tokens at the positions
    ``first[k]..last[k] - 1`` of ``tokens``."""
    out = mask.copy()
    bits = out.view(np.uint32)
    if bits.shape[0] > 0:
        for k in range(first.shape[0]):
            for i in range(first[k], last[k]):
                token = tokens[i]
                bits[token >> 5] &= ~(np.uint32(1) << np.uint32(token & 31))
    return out


@njit(
    (
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        INT,
    ),
    cache=True,
    nogil=True,
)
def cut_walk(
    tokens, inverse, nodes, exits, mask, starts, stops, own_tokens, own_inverse, own_nodes, shift
):
    """A lexeme walk in trie order (``nodes[i]`` the trie node of ``tokens[i]``,
    ascending) without the tokens whose nodes lie in one of the ranges
    ``[starts[k], stops[k])``, with ``own_tokens`` (at ``own_nodes``, ascending) merged
    in by node, a kept token first where two share one: ``(tokens, inverse, exits,
    mask)``, still in trie order, so a step's token is found by a binary search
    (``search_trie_order``). The inverses of the own tokens are shifted by ``shift``
    (their ends come after the walk's); exits in a range are dropped; ``mask`` (the
    walk's packed tokens, or empty when it has none) loses the tokens cut and gains the
    own ones. Ranges may overlap or nest (a node's subtree holds nodes on a path below
    it): merged first, they are a few runs of positions, so the rest is copied in
    slices, in one call where the numpy steps took thirty (``fsm.row_walk._without``)."""
    merged_starts, merged_stops = _merged_ranges(starts, stops)
    count = merged_starts.shape[0]
    first = np.searchsorted(nodes, merged_starts)
    last = np.searchsorted(nodes, merged_stops)
    cut = 0
    for k in range(count):
        cut += last[k] - first[k]
    kept = tokens.shape[0] - cut
    out_tokens = np.empty(kept + own_tokens.shape[0], np.int32)
    out_inverse = np.empty(kept + own_tokens.shape[0], np.int32)
    out_mask = _cleared(mask, tokens, first, last)
    bits = out_mask.view(np.uint32)
    position, written, own = 0, 0, 0
    for k in range(count + 1):
        stop = first[k] if k < count else tokens.shape[0]
        i = position
        while i < stop:  # the kept run copied in slices, an own token between two
            j = stop
            if own < own_tokens.shape[0]:
                j = min(stop, i + np.searchsorted(nodes[i:stop], own_nodes[own], side="right"))
            out_tokens[written : written + j - i] = tokens[i:j]
            out_inverse[written : written + j - i] = inverse[i:j]
            written += j - i
            i = j
            while i < stop and own < own_tokens.shape[0] and own_nodes[own] < nodes[i]:
                out_tokens[written] = own_tokens[own]
                out_inverse[written] = own_inverse[own] + shift
                written += 1
                own += 1
        if k < count:
            position = last[k]
    for i in range(own, own_tokens.shape[0]):
        out_tokens[written] = own_tokens[i]
        out_inverse[written] = own_inverse[i] + shift
        written += 1
    if bits.shape[0] > 0:
        for i in range(own_tokens.shape[0]):
            token = own_tokens[i]
            bits[token >> 5] |= np.uint32(1) << np.uint32(token & 31)
    return out_tokens, out_inverse, _outside(exits, merged_starts, merged_stops), out_mask


@njit(
    (READS_INT32, READS_INT32, READS_INT32, READS_INT32, READS_INT32, READS_INT32),
    cache=True,
    nogil=True,
)
def cut_mask(tokens, nodes, exits, mask, starts, stops):
    """``cut_walk`` without the copy: ``(mask, exits)`` of a walk in trie order (its
    packed ``mask``) less the tokens whose nodes lie in one of the ranges ``[starts[k],
    stops[k])`` and the exits there. The walk's tokens stay where they are, read through
    the mask (``fsm.row_walk._CutWalk``): a row inside an object's key keeps ~48,800
    tokens of the JSON string's walk and copied them per row."""
    merged_starts, merged_stops = _merged_ranges(starts, stops)
    first = np.searchsorted(nodes, merged_starts)
    last = np.searchsorted(nodes, merged_stops)
    return _cleared(mask, tokens, first, last), _outside(exits, merged_starts, merged_stops)


def cut_mask_py(tokens, nodes, exits, mask, starts, stops):
    """Plain-Python twin of ``cut_mask``."""
    ranges = list(zip(starts.tolist(), stops.tolist()))
    out_mask = mask.view(np.uint32).copy()
    for token, node in zip(tokens.tolist(), nodes.tolist()):
        if any(start <= node < stop for start, stop in ranges):
            out_mask[token // 32] &= ~np.uint32(1 << (token % 32))
    kept = [exit for exit in exits.tolist() if not any(a <= exit < b for a, b in ranges)]
    return out_mask.view(np.int32), np.asarray(kept, np.int32)


def cut_walk_py(
    tokens, inverse, nodes, exits, mask, starts, stops, own_tokens, own_inverse, own_nodes, shift
):
    """Plain-Python twin of ``cut_walk``."""
    out = [
        position
        for position, node in enumerate(nodes.tolist())
        if not any(start <= node < stop for start, stop in zip(starts.tolist(), stops.tolist()))
    ]
    kept = [(int(nodes[i]), int(tokens[i]), int(inverse[i])) for i in out]
    added = [
        (node, token, end + shift)
        for node, token, end in zip(own_nodes.tolist(), own_tokens.tolist(), own_inverse.tolist())
    ]
    merged: list[tuple[int, int, int]] = []
    while kept or added:  # the merge of two runs by node, a kept token first on a tie
        if added and (not kept or added[0][0] < kept[0][0]):
            merged.append(added.pop(0))
        else:
            merged.append(kept.pop(0))
    gone = sorted(set(range(len(tokens))) - set(out))
    out_mask = mask.view(np.uint32).copy()
    if len(out_mask):
        for token in tokens[gone].tolist():
            out_mask[token // 32] &= ~np.uint32(1 << (token % 32))
        for token in own_tokens.tolist():
            out_mask[token // 32] |= np.uint32(1 << (token % 32))
    out_exits = [
        exit
        for exit in exits.tolist()
        if not any(start <= exit < stop for start, stop in zip(starts.tolist(), stops.tolist()))
    ]
    return (
        np.asarray([token for _, token, _ in merged], np.int32),
        np.asarray([end for _, _, end in merged], np.int32),
        np.asarray(out_exits, np.int32),
        out_mask.view(np.int32),
    )


@njit((READS_INT32, READS_INT32, READS_INT32, READS_INT32), cache=True, nogil=True)
def in_trie_order(tokens, ends, token_ranks, token_ids):
    """A walk's distinct ``tokens`` in trie order (by ``token_ranks``), each ending in
    ``distinct[inverse]`` (``ends`` are states: distinct ascending), in linear time: one
    scatter over the trie's ranks and one mark per state, where sorting a big walk's
    runs together and numbering its ends took a third of its first walk.

    Returns ``(tokens, inverse, distinct)``."""
    at = np.full(token_ids.shape[0], -1, np.int32)  # end state per rank
    most = -1
    for i in range(tokens.shape[0]):
        at[token_ranks[tokens[i]]] = ends[i]
        most = max(most, ends[i])
    number = np.full(most + 1, -1, np.int32)
    for i in range(ends.shape[0]):
        number[ends[i]] = 0
    distinct = np.empty(most + 1, np.int32)
    count = 0
    for state in range(most + 1):
        if number[state] == 0:
            number[state] = count
            distinct[count] = state
            count += 1
    out_tokens = np.empty(tokens.shape[0], np.int32)
    inverse = np.empty(tokens.shape[0], np.int32)
    found = 0
    for rank in range(token_ids.shape[0]):
        if at[rank] >= 0:
            out_tokens[found] = token_ids[rank]
            inverse[found] = number[at[rank]]
            found += 1
    return out_tokens, inverse, distinct[:count].copy()


def in_trie_order_py(tokens, ends, token_ranks, token_ids):
    """Plain-Python twin of ``in_trie_order``."""
    order = np.argsort(token_ranks[tokens], kind="stable")
    distinct, inverse = np.unique(ends, return_inverse=True)
    return (
        tokens[order].astype(np.int32),
        inverse[order].astype(np.int32),
        distinct.astype(np.int32),
    )


@njit((READS_UINT8, READS_INT32, READS_INT32, READS_UINT8), cache=True, nogil=True)
def follow_paths(labels, ends, starts, data):
    """Below each ``starts[r]``, the trie nodes of ``data``'s prefixes, shortest first,
    as far as the trie holds them (``paths[r, i]`` spells ``data[: i + 1]`` below the
    start; -1 past where it stops): a literal lexeme's walk visits only these, from the
    root or below where another lexeme ends. Children are found by hopping over
    siblings (``ends`` of each)."""
    paths = np.full((starts.shape[0], data.shape[0]), -1, np.int32)
    for r in range(starts.shape[0]):
        node = starts[r]
        for i in range(data.shape[0]):
            child = node + 1
            while child < ends[node] and labels[child] != data[i]:
                child = ends[child]
            if child >= ends[node]:
                break
            paths[r, i] = child
            node = child
    return paths


@njit(
    (READS_UINT8, READS_INT32, READS_INT32, READS_INT32, READS_INT32, READS_UINT8),
    cache=True,
    nogil=True,
)
def literal_tokens(labels, ends, token_starts, token_ids, starts, data):
    """A literal lexeme's walk below each ``starts[r]`` (``follow_paths``' nodes): the
    tokens ending on the path ``data`` spells, a start's path in turn and the shortest
    prefix first, and the nodes with children where all of ``data`` is read (the lexeme
    ends there and the walk goes on below them). A key's row walks its rest this way
    at every character; the path's token slices were gathered in Python, one numpy
    call each.

    Returns ``(tokens, inverse, read, exits)``: token ``i`` has read ``read[inverse[i]]``
    bytes of ``data`` (``read``: distinct, in order of first appearance)."""
    size = data.shape[0]
    paths = follow_paths(labels, ends, starts, data)
    on_path = np.empty(paths.size, np.int32)  # the paths' nodes in order, then how
    reads = np.empty(paths.size, np.int32)  # many bytes of ``data`` each spells
    nodes = 0
    count = 0
    exit_count = 0
    for r in range(starts.shape[0]):
        for i in range(size):
            node = paths[r, i]
            if node < 0:
                break
            on_path[nodes] = node
            reads[nodes] = i + 1
            nodes += 1
            count += token_starts[node + 1] - token_starts[node]
            if i == size - 1 and ends[node] > node + 1:
                exit_count += 1
    tokens = np.empty(count, np.int32)
    inverse = np.empty(count, np.int32)
    exits = np.empty(exit_count, np.int32)
    code_of = np.full(size + 1, -1, np.int32)
    read = np.empty(size, np.int32)
    distinct = 0
    found = 0
    exited = 0
    for k in range(nodes):
        node, spelled = on_path[k], reads[k]
        first, last = token_starts[node], token_starts[node + 1]
        if last > first and code_of[spelled] < 0:
            code_of[spelled] = distinct
            read[distinct] = spelled
            distinct += 1
        for t in range(first, last):
            tokens[found] = token_ids[t]
            inverse[found] = code_of[spelled]
            found += 1
        if spelled == size and ends[node] > node + 1:
            exits[exited] = node
            exited += 1
    return tokens, inverse, read[:distinct].copy(), exits


@njit(
    (READS_UINT8, READS_INT32, READS_INT32, READS_INT32, READS_INT32, READS_UINT8, READS_INT32),
    cache=True,
    nogil=True,
)
def literal_tokens_of_texts(labels, ends, token_starts, token_ids, starts, data, bounds):
    """``literal_tokens`` of each text ``data[bounds[k] : bounds[k + 1]]`` below
    ``starts``, in one call: the keys of an object met in one row (a call costs more than
    a key's walk), each text's four arrays concatenated in turn.

    Returns ``(tokens, inverse, read, exits, token_bounds, read_bounds, exit_bounds)``:
    text ``k``'s tokens are ``tokens[token_bounds[k] : token_bounds[k + 1]]``, and so on;
    its ``inverse`` indexes its own ``read``."""
    texts = bounds.shape[0] - 1
    parts = [
        literal_tokens(
            labels, ends, token_starts, token_ids, starts, data[bounds[k] : bounds[k + 1]]
        )
        for k in range(texts)
    ]
    token_bounds = np.zeros(texts + 1, np.int32)
    read_bounds = np.zeros(texts + 1, np.int32)
    exit_bounds = np.zeros(texts + 1, np.int32)
    for k in range(texts):
        token_bounds[k + 1] = token_bounds[k] + parts[k][0].shape[0]
        read_bounds[k + 1] = read_bounds[k] + parts[k][2].shape[0]
        exit_bounds[k + 1] = exit_bounds[k] + parts[k][3].shape[0]
    tokens = np.empty(token_bounds[texts], np.int32)
    inverse = np.empty(token_bounds[texts], np.int32)
    read = np.empty(read_bounds[texts], np.int32)
    exits = np.empty(exit_bounds[texts], np.int32)
    for k in range(texts):
        tokens[token_bounds[k] : token_bounds[k + 1]] = parts[k][0]
        inverse[token_bounds[k] : token_bounds[k + 1]] = parts[k][1]
        read[read_bounds[k] : read_bounds[k + 1]] = parts[k][2]
        exits[exit_bounds[k] : exit_bounds[k + 1]] = parts[k][3]
    return tokens, inverse, read, exits, token_bounds, read_bounds, exit_bounds


@njit((READS_UINT8, READS_INT32, READS_INT32, READS_UINT8, READS_INT32), cache=True, nogil=True)
def paths_of_texts(labels, ends, starts, data, bounds):
    """``follow_paths`` of each text ``data[bounds[k] : bounds[k + 1]]`` below each of
    ``starts``, in one call: "any other key" walks down every key name of an object, and
    a call per name cost more than its path.

    Returns ``(nodes, path_bounds)``: text ``k``'s path below ``starts[r]`` is
    ``nodes[path_bounds[p] : path_bounds[p + 1]]`` for ``p = k * len(starts) + r``, its
    prefixes' nodes shortest first as far as the trie holds them (empty where the start
    holds no first byte)."""
    texts = bounds.shape[0] - 1
    count = starts.shape[0]
    nodes = np.empty(count * (bounds[texts] - bounds[0]), np.int32)
    path_bounds = np.zeros(texts * count + 1, np.int32)
    found = 0
    for k in range(texts):
        for r in range(count):
            node = starts[r]
            for i in range(bounds[k], bounds[k + 1]):
                child = node + 1
                while child < ends[node] and labels[child] != data[i]:
                    child = ends[child]
                if child >= ends[node]:
                    break
                nodes[found] = child
                found += 1
                node = child
            path_bounds[k * count + r + 1] = found
    return nodes[:found].copy(), path_bounds


def paths_of_texts_py(labels, ends, starts, data, bounds):
    """Plain-Python twin of ``paths_of_texts``."""
    nodes, path_bounds = [], [0]
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        paths = follow_paths_py(labels, ends, starts, data[a:b])
        for path in paths.tolist():
            nodes.extend(node for node in path if node >= 0)
            path_bounds.append(len(nodes))
    return np.asarray(nodes, np.int32), np.asarray(path_bounds, np.int32)


@njit(
    (READS_INT32, READS_INT32, READS_INT32, READS_INT32, READS_INT32, INT, INT),
    cache=True,
    nogil=True,
)
def walk_at_nodes(token_starts, token_ids, ends, nodes, states, dead, exit_state):
    """A lexeme's walk read off its states at trie nodes, node by node (a walk down key
    names, whose state at each node met is known: ``fsm.row_walk``), in one call where
    a dozen numpy calls on a few nodes took several times the work.

    Returns ``(tokens, ends_at, inverse, exits)``: the tokens ending at each node whose
    state is not ``dead``, token ``i`` in state ``ends_at[inverse[i]]`` (one entry per
    node ending some token, in order); ``exits``: those nodes in ``exit_state`` with
    children (the lexeme is over there, and the continuation walks below them)."""
    count = 0
    holding = 0
    exiting = 0
    for k in range(nodes.shape[0]):
        if states[k] == dead:
            continue
        node = nodes[k]
        size = token_starts[node + 1] - token_starts[node]
        count += size
        holding += size > 0
        exiting += states[k] == exit_state and ends[node] > node + 1
    tokens = np.empty(count, np.int32)
    inverse = np.empty(count, np.int32)
    ends_at = np.empty(holding, np.int32)
    exits = np.empty(exiting, np.int32)
    found = 0
    kept = 0
    out = 0
    for k in range(nodes.shape[0]):
        state = states[k]
        if state == dead:
            continue
        node = nodes[k]
        if state == exit_state and ends[node] > node + 1:
            exits[out] = node
            out += 1
        first, last = token_starts[node], token_starts[node + 1]
        if last == first:
            continue
        ends_at[kept] = state
        for t in range(first, last):
            tokens[found] = token_ids[t]
            inverse[found] = kept
            found += 1
        kept += 1
    return tokens, ends_at, inverse, exits


def walk_at_nodes_py(token_starts, token_ids, ends, nodes, states, dead, exit_state):
    """Plain-Python twin of ``walk_at_nodes``."""
    tokens, inverse, ends_at, exits = [], [], [], []
    for node, state in zip(nodes.tolist(), states.tolist()):
        if state == dead:
            continue
        if state == exit_state and ends[node] > node + 1:
            exits.append(node)
        ids = token_ids[token_starts[node] : token_starts[node + 1]].tolist()
        if ids:
            tokens.extend(ids)
            inverse.extend([len(ends_at)] * len(ids))
            ends_at.append(state)
    return tuple(np.asarray(values, np.int32) for values in (tokens, ends_at, inverse, exits))


_NO_INT32 = np.empty(0, np.int32)


def literal_tokens_of_texts_py(labels, ends, token_starts, token_ids, starts, data, bounds):
    """Plain-Python twin of ``literal_tokens_of_texts``."""
    parts = [
        literal_tokens_py(labels, ends, token_starts, token_ids, starts, data[a:b])
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())
    ]
    joined = [np.concatenate([_NO_INT32, *(part[i] for part in parts)]) for i in range(4)]
    counted = [
        np.concatenate([[0], np.cumsum([len(part[i]) for part in parts])]).astype(np.int32)
        for i in (0, 2, 3)
    ]
    return (*(array.astype(np.int32) for array in joined), *counted)


def literal_tokens_py(labels, ends, token_starts, token_ids, starts, data):
    """Plain-Python twin of ``literal_tokens``."""
    paths = follow_paths_py(labels, ends, starts, data)
    tokens, reads, exits = [], [], []
    for path in paths.tolist():
        for i, node in enumerate(path):
            if node < 0:
                break
            for k in range(int(token_starts[node]), int(token_starts[node + 1])):
                tokens.append(int(token_ids[k]))
                reads.append(i + 1)
            if i == len(path) - 1 and ends[node] > node + 1:
                exits.append(node)
    read = list(dict.fromkeys(reads))
    inverse = [read.index(r) for r in reads]
    return (
        np.asarray(tokens, np.int32),
        np.asarray(inverse, np.int32),
        np.asarray(read, np.int32),
        np.asarray(exits, np.int32),
    )


def follow_paths_py(labels, ends, starts, data):
    """Plain-Python twin of ``follow_paths``."""
    paths = np.full((len(starts), len(data)), -1, np.int32)
    for r, start in enumerate(starts.tolist()):
        node = start
        for i, byte in enumerate(data.tolist()):
            children = []
            child = node + 1
            while child < ends[node]:
                children.append(child)
                child = int(ends[child])
            matching = [child for child in children if labels[child] == byte]
            if not matching:
                break
            node = paths[r, i] = matching[0]
    return paths


@njit((READS_INT32, READS_INT32, INT, INT), cache=True, nogil=True)
def masks_up_to(tokens, levels, top, words):
    """int32[top + 1, words]: row ``l`` packs the tokens whose level is at most ``l``
    (a token of a negative level, or above ``top``, in none). A bounded string's
    tokens within its bounds are a row of these (units begun as the level), or two
    rows told apart: the selection of each count is a few word operations, not a pass
    over its tens of thousands of tokens (``fsm.row_walk``)."""
    out = np.zeros((top + 1, words), np.uint32)
    for i in range(tokens.shape[0]):
        level = levels[i]
        if 0 <= level <= top:
            token = tokens[i]
            out[level, token >> 5] |= np.uint32(1) << np.uint32(token & 31)
    for level in range(1, top + 1):
        out[level] |= out[level - 1]
    return out.view(np.int32)


def masks_up_to_py(tokens, levels, top, words):
    """Plain-Python twin of ``masks_up_to``."""
    rows = []
    for level in range(top + 1):
        upto = [t for t, at in zip(tokens.tolist(), levels.tolist()) if 0 <= at <= level]
        rows.append(pack_bitmask_py(np.asarray(upto, np.int32), words))
    return np.stack(rows) if rows else np.zeros((0, words), np.int32)


@njit(
    (
        READS_INT32_TABLE,
        INT,
        INT,
        READS_INT32,
        READS_UINT8,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        READS_INT32,
        INT,
    ),
    cache=True,
    nogil=True,
)
def walk_trie_counting(
    table, exit_state, max_count, roots, labels, depths, ends, token_starts, token_ids, max_depth
):
    """``walk_trie`` over a unit automaton's ``table`` times a count of units completed
    (``counting_table_py``'s product, every root entered in state 0 with no unit
    counted), without building the product: each open node keeps its unit state and
    its count, and the unit table, a few rows, stays in the cache where the product's
    (the states times the trie's depth) did not. State ``s`` with count ``n`` is
    reported as ``s * (max_count + 1) + n``; the exit has no row, so a node with
    children where the unit automaton exits is pending.

    Returns ``(token_ids, end_codes, pending_nodes, pending_codes)``, as ``walk_trie``."""
    width = max_count + 1
    out_tokens, out_codes, pending_nodes, pending_codes = _walk_outputs(roots, ends, token_starts)
    open_states = np.empty(max_depth + 1, np.int64)  # per depth: the open node's unit
    open_counts = np.empty(max_depth + 1, np.int64)  # state and units completed
    found = 0
    pending = 0
    for r in range(roots.shape[0]):
        root = roots[r]
        open_states[depths[root]] = 0
        open_counts[depths[root]] = 0
        node = root + 1
        stop = ends[root]
        while node < stop:
            depth = depths[node]
            state = table[open_states[depth - 1], labels[node]]
            if state < 0:
                node = ends[node]
                continue
            count = open_counts[depth - 1]
            if state == 0:  # a unit completed
                count = min(count + 1, max_count)
            code = state * width + count
            found = _report_tokens(
                out_tokens, out_codes, found, node, code, token_starts, token_ids
            )
            if state == exit_state:
                if ends[node] > node + 1:
                    pending_nodes[pending] = node
                    pending_codes[pending] = code
                    pending += 1
                node = ends[node]
                continue
            open_states[depth] = state
            open_counts[depth] = count
            node += 1
    return _walk_result(out_tokens, out_codes, found, pending_nodes, pending_codes, pending)


def walk_trie_counting_py(
    table, exit_state, max_count, roots, labels, depths, ends, token_starts, token_ids, max_depth
):
    """Plain-Python twin of ``walk_trie_counting``: ``walk_trie_py`` over the product."""
    product, row_of = counting_table_py(table, exit_state, max_count)
    return walk_trie_py(
        product,
        row_of,
        roots,
        np.zeros(len(roots), np.int32),
        labels,
        depths,
        ends,
        token_starts,
        token_ids,
        np.zeros(0, np.bool_),
        max_depth,
    )


@njit((READS_INT32, READS_INT32, INT, INT, INT), cache=True, nogil=True)
def counted_codes(tokens, end_codes, width, exit_kind, vocab_size):
    """A counted walk's ends (``walk_trie_counting``) as its codes, in one pass: every
    end of the lexeme one code (``exit_kind * width``), the others their own; the
    distinct codes ascending and each token's index among them (``inverse``, and by
    token id in ``codes_by_token``, -1 where not read); each token's level for the
    masks by units (``masks_up_to``): units begun for a token ending inside the
    lexeme (a partial unit counts), units completed for one ending it, -1 for the
    other kind; and the most units begun. Returns ``(codes, inverse, codes_by_token,
    inside_levels, ending_levels, most)``."""
    exit_code = exit_kind * width
    present = np.zeros(exit_code + 1, np.bool_)
    coded = np.empty(end_codes.shape[0], np.int32)
    inside_levels = np.empty(end_codes.shape[0], np.int32)
    ending_levels = np.empty(end_codes.shape[0], np.int32)
    most = 0
    for i in range(end_codes.shape[0]):
        code = end_codes[i]
        kind = code // width
        count = code - kind * width
        if kind == exit_kind:
            code = exit_code
            inside_levels[i] = -1
            ending_levels[i] = count
            begun = count
        else:
            begun = count + 1 if kind > 0 else count
            inside_levels[i] = begun
            ending_levels[i] = -1
        coded[i] = code
        present[code] = True
        most = max(most, begun)
    position = np.empty(exit_code + 1, np.int32)
    codes = np.empty(exit_code + 1, np.int32)
    distinct = 0
    for code in range(exit_code + 1):
        if present[code]:
            position[code] = distinct
            codes[distinct] = code
            distinct += 1
    codes = codes[:distinct].copy()
    inverse = np.empty(end_codes.shape[0], np.int32)
    codes_by_token = np.full(vocab_size, -1, np.int32)
    for i in range(end_codes.shape[0]):
        inverse[i] = position[coded[i]]
        codes_by_token[tokens[i]] = inverse[i]
    return codes, inverse, codes_by_token, inside_levels, ending_levels, most


def counted_codes_py(tokens, end_codes, width, exit_kind, vocab_size):
    """Numpy twin of ``counted_codes``."""
    kinds, counts = np.divmod(end_codes, width)
    ending = kinds == exit_kind
    begun = counts + ((kinds > 0) & ~ending)
    codes, inverse = np.unique(np.where(ending, exit_kind * width, end_codes), return_inverse=True)
    codes_by_token = np.full(vocab_size, -1, np.int32)
    codes_by_token[tokens] = inverse
    return (
        codes.astype(np.int32),
        inverse.astype(np.int32),
        codes_by_token,
        np.where(ending, -1, begun).astype(np.int32),
        np.where(ending, counts, -1).astype(np.int32),
        int(begun.max(initial=0)),
    )


def counting_table_py(table, exit_state, max_count):
    """The product ``walk_trie_counting`` walks, as a table: a unit automaton's ``table``
    (its exit: ``exit_state``) times a count of units completed, 0..``max_count``:
    state ``s`` with count ``n`` is ``s * (max_count + 1) + n``, the exit with count
    ``n`` is ``exit_state * (max_count + 1) + n`` and has no row (a trie walk stops
    there, reporting it). Entering state 0 (a unit completed) adds one to the count,
    up to ``max_count``. Returns ``(table, row_of)`` for ``walk_trie``."""
    width = max_count + 1
    states = table.shape[0]
    counts = np.arange(width, dtype=np.int32)
    nxt = table[:, None, :]  # [state, 1, byte]
    entered_plain = (nxt == 0).astype(np.int32)
    moved = nxt * width + np.minimum(counts[None, :, None] + entered_plain, max_count)
    exits = exit_state * width + counts[None, :, None]
    product = np.where(nxt < 0, nxt, np.where(nxt == exit_state, exits, moved))
    row_of = np.full((exit_state + 1) * width, -1, np.int32)
    row_of[: states * width] = np.arange(states * width, dtype=np.int32)
    return product.reshape(states * width, 256).astype(np.int32), row_of
