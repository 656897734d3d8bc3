#!/usr/bin/env python3
"""Prints criterion medians as a Markdown table, one row per benchmark, with ratios.

    python3 tools/criterion_table.py GROUP [GROUP ...] [--base NAME] [--per N [--unit WORD]]

Reads target/criterion/GROUP/**/new/estimates.json (the last `cargo bench` run); a row is named
by its path under GROUP (`accept_many/256` for a parameterised benchmark). `--base NAME`
adds a column with each median divided by NAME's median in the same group; `--per N` divides
times by N (e.g. 256 for a per-block figure of a 256-block burst), and `--unit WORD` names what
one of the N is (default `block`).
"""
import json
import pathlib
import sys


def main(argv):
    groups, base, per, unit_word = [], None, 1, "block"
    args = iter(argv)
    for arg in args:
        if arg == "--base":
            base = next(args)
        elif arg == "--per":
            per = int(next(args))
        elif arg == "--unit":
            unit_word = next(args)
        else:
            groups.append(arg)
    root = pathlib.Path("target/criterion")
    for group in groups:
        medians = {}
        group_dir = root / group
        for est in sorted(group_dir.glob("**/new/estimates.json")):
            data = json.loads(est.read_text())
            # A benchmark outside any group (`round_trip`) is its own GROUP directory.
            name = est.parent.parent.relative_to(group_dir).as_posix()
            name = group if name == "." else name
            medians[name] = data["median"]["point_estimate"] / per
        if not medians:
            print(f"no results for {group}", file=sys.stderr)
            continue
        unit = f"ns per {unit_word}" if per != 1 else "ns"
        header = f"| {group} | median ({unit}) |"
        rule = "|---|---:|"
        if base in medians:
            header += f" vs {base} |"
            rule += "---:|"
        print(header)
        print(rule)
        for name, ns in sorted(medians.items(), key=lambda kv: kv[1]):
            row = f"| {name} | {ns:.1f} |"
            if base in medians:
                row += f" {ns / medians[base]:.2f}x |"
            print(row)
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
