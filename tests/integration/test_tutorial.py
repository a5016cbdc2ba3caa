"""docs/tutorial.ipynb runs top to bottom on the default model (what a newcomer does)."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUTORIAL = DOCS / "tutorial.ipynb"


def test_tutorial_is_committed_without_outputs():
    notebook = nbformat.read(TUTORIAL, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.mark.slow
def test_tutorial_runs_top_to_bottom(monkeypatch):
    # The kernel inherits this: torch's OpenMP threads spin while they wait, so on cores
    # shared with other jobs (CI runners, parallel tests) every small op slows down
    # about tenfold; one thread per process keeps the run near a minute.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    notebook = nbformat.read(TUTORIAL, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(DOCS)}},
    )
    client.execute()  # raises CellExecutionError naming the cell that failed
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    html = [out.data["text/html"] for out in outputs if "text/html" in out.get("data", {})]
    assert any('class="seqstate"' in page for page in html), "states display as HTML"
