"""The decode loop, one job per module, imported in this order (no cycles):

``errors`` (typed errors) <- ``hypothesis`` (the record of one generated span, shared
by plain rows and beams) <- ``prepare`` (tokenize a row, heal its seam, choose the
constraint) <- ``logits`` (mask, sampler) <- ``commit`` (append one token: constraint,
detokenizer, stop strings, budget) <- ``draw`` (sample one step with hooks, bans and
retries) <- ``result`` (a hypothesis back into a row) <- ``loop`` (the model's own
loop, streaming), ``beam`` (beam search), ``step`` (one step on external logits).
The rules they implement are written in docs/design.md, "The decode loop and its rules".
"""
