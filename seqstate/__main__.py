"""Demo: ``python -m seqstate`` runs a chained structured generation on the default model.

One sequence, four generators in a row (a regex, a choice, a JSON object and free
text), then a constrained beam search; prints each state and its captures.
"""

from __future__ import annotations

import argparse
import time

import seqstate as ss

PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"type": "string", "maxLength": 20},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    args = parser.parse_args()

    started = time.perf_counter()
    model = ss.load_model(device=args.device)
    print(f"loaded {model} in {time.perf_counter() - started:.1f}s")

    prompt = model.chat(
        [{"role": "user", "content": "Describe a famous scientist in a short record."}]
    )
    state = (
        prompt
        + "Year of birth: "
        + ss.regex(r"1[6-9][0-9]{2}", name="year")
        + "\nField: "
        + ss.choice(["physics", "chemistry", "biology", "mathematics"], name="field")
        + "\nRecord: "
        + ss.json(PERSON_SCHEMA, name="record")
        + "\nSummary:"
        + ss.gen(max_tokens=30, stop="\n\n", name="summary")
    )
    print("\n--- chained generation (greedy) ---")
    print(str(state)[len(str(prompt)) :])
    print("\ncaptures:", {k: state[k] for k in ("year", "field", "record", "summary")})

    question = model.chat([{"role": "user", "content": "What is 7 times 8?"}])
    beams = question + "7 times 8 is " + ss.regex(r"[1-9][0-9]{0,2}", name="n", sampler=ss.beam(4))
    print("\n--- constrained beam search (4 beams, best first) ---")
    for k, (text, logprob) in enumerate(zip(beams.texts[0], beams.logprobs[0])):
        print(f"beam {k}: {text[len(str(question)) :]!r}  logprob={logprob:.2f}")
    print(f"\nKV pool: {model.kv_stats()}")


if __name__ == "__main__":
    main()
