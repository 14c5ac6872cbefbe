"""At a terminal the tables and progress lines are drawn by rich, which reads `[...]` as its
markup: stored text (a file target's path, a --testbed tag, a sweep point's values or error)
is shown as it is. `[red]` in a file's name was drawn as a colour and dropped from the path,
and a tag `a[/]b` made `results list` end in a traceback (MarkupError)."""

import io
import sys

from rich.console import Console

import ssdlab.cli.output as output
import ssdlab.units_progress as units_progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_table_at_a_terminal_shows_brackets_as_they_are(monkeypatch):
    out = Tty()
    monkeypatch.setattr(sys, "stdout", out)
    output.emit_table("run 1 fill file:/srv/[red]x.bin:1G (complete)", ["tag", "value"],
                      [["a[/]b", "[bold]y"], ["[/dev/sdb]", 1.5]])
    text = out.getvalue()
    for shown in ("[red]x.bin", "a[/]b", "[bold]y", "[/dev/sdb]"):
        assert shown in text, text


def test_a_units_bars_line_at_a_terminal_shows_brackets_as_they_are(monkeypatch):
    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(sys, "stderr", Tty())
    bar = units_progress.UnitsProgress("sweep sw-0 fill", 1)
    assert bar.bar is not None
    seen = io.StringIO()
    bar.bar.live.console = Console(file=seen, force_terminal=False, width=200)
    with bar:
        bar.finished(False, "nand.cell=[/]: failed (refusing [/dev/sdb]: in use)")
    assert "nand.cell=[/]: failed (refusing [/dev/sdb]: in use)" in seen.getvalue(), seen.getvalue()


def test_the_bar_of_a_big_file_being_read_shows_its_name_as_it_is(tmp_path, monkeypatch):
    """A trace or job file named `a{b}[red].log`: its name was the bar's format string (KeyError
    'b') and markup (`[red]` a colour, not part of the name)."""
    from ssdlab.cli.request import CliConsole

    f = tmp_path / "a{b}[red].log"
    f.write_text("x" * 100)
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(CliConsole, "BIG", 10)
    with CliConsole().reading(str(f)) as progress:
        progress(50, 100)
