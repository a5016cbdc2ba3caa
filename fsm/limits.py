"""Bounds on the work one constraint may cause, shared by every automaton builder."""

DEFAULT_MAX_STATES = 200_000
"""Automaton states a constraint may grow to before ``ConstraintTooLarge`` is raised."""
