"""Bounds on the work one constraint may cause, shared by every automaton builder."""

DEFAULT_MAX_STATES = 200_000
"""Automaton states a constraint may grow to before ``ConstraintTooLarge`` is raised."""

DEFAULT_MAX_ROW_STATES = 5_000
"""Automaton states one token row (one mask) may expand before ``ConstraintTooLarge``
is raised: a bound on the work of a single decode step. Rows of real schemas expand a
few dozen (a few hundred for the first row of a large schema); a constraint that needs
thousands for one mask (a bounded repetition thousands long, say) fails with a typed
error instead of stalling generation for seconds."""
