"""seqstate on vLLM.

- ``backends.vllm.processor.SeqstateLogitsProcessor``: seqstate's constraints as a vLLM
  v1 logits processor (registered in the ``vllm.logits_processors`` entry-point group,
  so installing seqstate next to vLLM is enough). A request opts in with
  ``SamplingParams(extra_args={"seqstate": {"json": schema}})`` (see
  ``backends.request_specs`` for the request dict, and docs/vllm.md).
- ``backends.vllm.engine``: a seqstate engine whose generator calls become vLLM requests.

Importing this package does not import vLLM; its modules do.
"""
