"""Progress reporting for long work (generations, eager index builds).

A model's ``progress`` setting is ``False`` (silent, the default), ``True`` (a tqdm
bar) or a callable that receives ``(done, total)`` after every update and
``(total, total)`` when the work ends.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

ProgressSetting = bool | Callable[[int, int], None]


def bar_class() -> Any:
    """tqdm's bar: ``tqdm.auto`` (a widget in Jupyter, text in a terminal) when
    ipywidgets is installed, else the text bar, which also prints in a notebook cell,
    without the "IProgress not found" warning ``tqdm.auto`` gives there."""
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    return tqdm


def stage_bar(description: str, total: int) -> Any:
    """A tqdm bar (see ``bar_class``) counting the stages of one long piece of work,
    with the stage under way and the time elapsed."""
    return bar_class()(
        total=total,
        desc=description,
        bar_format="{desc} |{bar}| {n_fmt}/{total_fmt}{postfix} [{elapsed}]",
    )


class Progress:
    """One piece of work reported through a progress setting; ``total`` may grow."""

    def __init__(self, setting: ProgressSetting, total: int, unit: str) -> None:
        self.setting, self.total = setting, total
        self._bar: Any = None
        if setting is True:
            self._bar = bar_class()(total=total, unit=unit, leave=False)

    def update(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.update(done - self._bar.n)
        elif callable(self.setting):
            self.setting(done, self.total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif callable(self.setting):
            self.setting(self.total, self.total)
