"""Command-line mistakes click finds (an unknown option, a missing argument, a value of the
wrong type) as the one line every user error is: what is wrong and where to look."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Sequence

import typer

from .. import methodology

# click's base error, found through typer's public BadParameter (typer vendors click);
# mypy is shown the class that lookup finds
if TYPE_CHECKING:
    from typer._click.exceptions import ClickException, UsageError
else:
    ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")

# how alike an unknown option and one of the command's must be to be suggested (difflib's
# ratio, dashes left out): --spar for --spare, --jsn for --json; never --rounds for --bogus
CLOSE = 0.8


class UnknownOption(UsageError):
    """An option the command does not have, found among words click let through (the run
    ids of a command that takes `-1`)."""

    def __init__(self, name: str, ctx: Any) -> None:
        super().__init__(f"no such option {name}", ctx)
        self.option_name = name


def mistake(e: ClickException, argv: Sequence[str]) -> str:
    """The line for click's error `e` about the command line `argv` (without the program)."""
    ctx = getattr(e, "ctx", None)
    if (isinstance(e, UnknownOption) or type(e).__name__ == "NoSuchOption") and ctx is not None:
        return unknown_option(getattr(e, "option_name"), ctx, named_test(ctx, argv))
    msg = e.format_message()
    if msg.startswith("No such command ") and ctx is not None:  # click's own class is a plain UsageError
        return unknown_command(getattr(e, "cmd_name", None) or msg.split("'")[1], ctx)
    hint = getattr(getattr(e, "param", None), "help", None)
    if type(e).__name__ == "MissingParameter" and isinstance(hint, str) and hint.startswith("one of:"):
        msg = f"{msg.rstrip('.')}: {hint}"  # a missing test names the list
    return f"{msg} (see --help)"


def unknown_option(name: str, ctx: Any, test: str | None = None) -> str:
    """`no such option NAME for `ssdlab CMD`; see `ssdlab CMD --help``, with the command's
    option that NAME is a slip of, if one is close."""
    words = " ".join(["ssdlab", *command_words(ctx), *([test] if test else [])])
    near = close_option(name, [o for p in ctx.command.get_params(ctx) if p.param_type_name == "option"
                               for o in (*p.opts, *p.secondary_opts)])
    meant = f" (did you mean {near}?)" if near else ""
    return f"no such option {name} for `{words}`{meant}; see `{words} --help`"


def unknown_command(name: str, ctx: Any) -> str:
    """`no such command NAME for `ssdlab GROUP`; see `ssdlab GROUP --help``, with the
    group's command NAME is a slip of, if one is close (commands are few and unlike)."""
    words = " ".join(["ssdlab", *command_words(ctx)])
    near = difflib.get_close_matches(name, list(getattr(ctx.command, "commands", {})), n=1, cutoff=0.6)
    meant = f" (did you mean {near[0]}?)" if near else ""
    return f"no such command {name} for `{words}`{meant}; see `{words} --help`"


def close_option(name: str, options: Sequence[str]) -> str | None:
    bare = {o.lstrip("-"): o for o in options if o.startswith("--") and o != name}
    near = difflib.get_close_matches(name.lstrip("-"), bare, n=1, cutoff=CLOSE)
    return bare[near[0]] if near else None


def command_words(ctx: Any) -> list[str]:
    """The command's words after the program's name (`results show`)."""
    words: list[str] = []
    while ctx.parent is not None:
        words.insert(0, ctx.info_name)
        ctx = ctx.parent
    return words


def named_test(ctx: Any, argv: Sequence[str]) -> str | None:
    """The test a command that takes one (run, sweep) was given on `argv`: its help reads the
    same for every test, but the line names what was typed."""
    if not any(p.name == "test" for p in ctx.command.params):
        return None
    rest = list(argv)
    for w in command_words(ctx):  # the words after the command's own
        rest = rest[rest.index(w) + 1:] if w in rest else rest
    return next((a for a in rest if a in methodology.ALL), None)


def option_without_value(root: Any, argv: Sequence[str]) -> str | None:
    """The line for an option that takes a value followed straight by another of the
    command's options (`--drive --db x.db`), which click would take as the value; None when
    there is none. Checked before click parses, as click's line would be about the stray
    words after it. A value given as `--drive=--db` is taken as it is."""
    cmd, rest = root, list(argv)
    words: list[str] = []
    while getattr(cmd, "commands", None) is not None:  # a group: on to the command named
        at = next((k for k, w in enumerate(rest) if not w.startswith("-")), None)
        if at is None or rest[at] not in cmd.commands:
            return None
        cmd, words, rest = cmd.commands[rest[at]], [*words, rest[at]], rest[at + 1:]
    options = [p for p in cmd.params if p.param_type_name == "option"]
    names = {o for p in options for o in (*p.opts, *p.secondary_opts)}
    takes = {o for p in options if not p.is_flag and not p.count and p.nargs == 1 for o in p.opts}
    k = 0
    while k < len(rest) - 1 and rest[k] != "--":
        if rest[k] in takes:
            if rest[k + 1] in names:
                test = next((w for w in rest if w in methodology.ALL), None) if any(
                    p.name == "test" for p in cmd.params) else None
                where = " ".join(["ssdlab", *words, *([test] if test else [])])
                return (f"{rest[k]} needs a value, but the word after it is the option {rest[k + 1]}; "
                        f"give {rest[k]} its value (see `{where} --help`)")
            k += 1  # its value
        k += 1
    return None
