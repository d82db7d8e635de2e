"""Help text of a suite's ``-o`` options, generated from its options class.

``buildbench run SUITE --help`` and ``buildbench SUITE --help`` list the options of ``SUITE``
from ``Suite.options_model().specs`` (name, accepted values, help, default, unit), the same
declarations the runner parses ``-o`` with, so the help cannot drift from what is accepted.
"""

from __future__ import annotations

import click

from buildbench.harness.options import COMMON_OPTIONS, OptionSpec

#: The heading of the common model-agent options in a suite's listing.
COMMON_HEADING = "Common model options (-o KEY=VALUE, every model agent)"


def option_rows(specs: tuple[OptionSpec, ...]) -> list[tuple[str, str]]:
    """``(NAME, what it accepts, its help and default)`` per option, in declaration order."""
    rows = []
    for spec in specs:
        described = spec.describe()
        rows.append((spec.name, f"{described} [{spec.unit}]" if spec.unit else described))
    return rows


def suite_option_sections(name: str, *, common: bool = True) -> list[tuple[str, list[tuple[str, str]]]]:
    """The headed option listings of suite ``name``: its own options, then (``common``) the common
    ones, with the suite's default where it redeclares one. Raises what loading the suite raises."""
    from buildbench.harness import get_suite

    suite = get_suite(name)
    names = {spec.name for spec in COMMON_OPTIONS}
    specs = suite.options_model().specs
    own = tuple(spec for spec in specs if spec.name not in names)
    sections = [(f"Options of {name} (-o KEY=VALUE)", option_rows(own))] if own else []
    if common:
        sections.append((COMMON_HEADING, option_rows(tuple(spec for spec in specs if spec.name in names))))
    return sections


def write_suite_options(formatter: click.HelpFormatter, name: str, *, common: bool = True) -> None:
    """Write suite ``name``'s option listings into ``formatter`` (a note when it cannot load)."""
    try:
        sections = suite_option_sections(name, common=common)
    except Exception as exc:  # the help of a broken plugin still shows, with the reason
        formatter.write_paragraph()
        formatter.write_text(f"(the options of {name!r} cannot be listed: {type(exc).__name__}: {exc})")
        return
    for heading, rows in sections:
        with formatter.section(heading):
            formatter.write_dl(rows)


def suite_options_epilog(name: str) -> str:
    """The epilog of suite ``name``'s own command group: the options ``buildbench run NAME``
    takes (kept as laid out: ``\\b`` paragraphs)."""
    formatter = click.HelpFormatter()
    write_suite_options(formatter, name, common=False)
    paragraphs = [p for p in formatter.getvalue().split("\n\n") if p.strip()]
    laid_out = "\n\n".join("\b\n" + p.rstrip("\n") for p in paragraphs)
    return (f"`buildbench run {name}` takes these -o options (`buildbench run {name} --help` lists the "
            f"common model options too).\n\n{laid_out}")


class RunCommand(click.Command):
    """``buildbench run``: its help lists the named suite's ``-o`` options (``run SUITE --help``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # --help is answered while the arguments are parsed, before SUITE has a value: keep them.
        ctx.meta["buildbench.run_args"] = list(args)
        return super().parse_args(ctx, args)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        name = self._suite_named(ctx.meta.get("buildbench.run_args", []))
        if name is None:
            formatter.write_paragraph()
            formatter.write_text("`buildbench run SUITE --help` lists SUITE's -o options.")
            return
        write_suite_options(formatter, name)

    def _suite_named(self, args: list[str]) -> str | None:
        """The SUITE argument among ``args`` (the first value that no option takes), if any."""
        takes_value = {opt for param in self.params if isinstance(param, click.Option) and not param.is_flag
                       and not param.count for opt in param.opts}
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                return args[i + 1] if i + 1 < len(args) else None
            if arg.startswith("-") and arg != "-":
                i += 2 if arg in takes_value else 1
                continue
            return arg
        return None


def bundled_suites() -> list[str]:
    """The suites this package ships (plugins installed beside it left out), sorted."""
    from buildbench.harness.registry import suite_names, suite_target

    return sorted(n for n in suite_names() if suite_target(n).startswith("buildbench.suites."))


def options_markdown(names: list[str] | None = None) -> str:
    """The ``-o`` reference of suites ``names`` (default: the bundled ones) as Markdown
    (``docs/options.md``): the common model options, then each suite's own, one table row per
    option from its options class."""
    from buildbench.harness import get_suite

    def table(specs: tuple[OptionSpec, ...]) -> list[str]:
        lines = ["| option | accepts: meaning (default) | unit |", "|---|---|---|"]
        for spec in specs:
            described = spec.describe().replace("|", r"\|")
            lines.append(f"| `{spec.name}` | {described} | {spec.unit} |")
        return lines

    out = ["# `-o` options", "",
           "<!-- Generated from each suite's options class by tools/options_doc.py: do not edit by hand. -->", "",
           "`buildbench run SUITE -o KEY=VALUE` (or a run file's `options:`) sets them; an unknown key or a",
           "value outside what the option accepts is refused before the run starts. `buildbench run SUITE",
           "--help` lists the same, and `buildbench suites --json` adds each suite's JSON Schema.", "",
           "## Common model options", "",
           "Every model agent and model client takes these; unset (`none`) is the agent's or the client's own",
           "value, no budget limit, or the full history. A suite may give one its own default (listed there).",
           "", *table(COMMON_OPTIONS)]
    common = {spec.name: spec for spec in COMMON_OPTIONS}
    for name in bundled_suites() if names is None else names:
        suite = get_suite(name)
        specs = suite.options_model().specs
        own = tuple(spec for spec in specs if spec.name not in common)
        changed = tuple(spec for spec in specs if spec.name in common and spec != common[spec.name])
        out += ["", f"## {name}", "", suite.description, ""]
        out += table(own) if own else ["No options of its own."]
        if changed:
            out += ["", "Common options with this suite's own default:", "", *table(changed)]
    return "\n".join(out) + "\n"
