"""The dependency direction of the design: seqstate and fsm never load torch."""

import subprocess
import sys


def test_import_seqstate_and_fsm_loads_no_torch():
    code = (
        "import sys, seqstate, fsm; "
        "print(sorted(m for m in ('torch', 'transformers', 'backends') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_seqstate_loads_no_numba():
    code = "import sys, seqstate; print('numba' in sys.modules, 'fsm.token_index' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
