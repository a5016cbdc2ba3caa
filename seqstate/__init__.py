"""seqstate: composable structured generation over immutable sequence states."""
