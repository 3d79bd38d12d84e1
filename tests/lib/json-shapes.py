#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# json-shapes.py MANPAGE SHAPE FILE: checks that every JSON document in
# FILE (one a line, or the whole file as one) has the shape SHAPE as the
# JSON OUTPUT section of rtplacectl(1) (MANPAGE) defines it: every key
# there, no other, each value of its type. Exits 1 naming the first
# mismatch.
import json
import re
import sys


def shapes(man):
    text = open(man).read()
    section = text.split("\n.SH JSON OUTPUT\n", 1)[1].split("\n.SH ", 1)[0]
    found = {}
    for name, body in re.findall(r"\n\.SS (\S+)\n\.nf\n(.*?)\n\.fi", section, re.S):
        found[name] = json.loads(body.replace("\\-", "-"))
    return found


def check(value, want, known, where):
    if isinstance(want, dict):
        if not isinstance(value, dict):
            raise ValueError(f"{where}: {value!r} is no object")
        keys = {k.rstrip("?") for k in want}
        need = {k for k in want if not k.endswith("?")}
        extra = set(value) - keys
        missing = need - set(value)
        if extra or missing:
            raise ValueError(f"{where}: keys {sorted(extra)} not in the shape, {sorted(missing)} missing")
        for k, t in want.items():
            if k.rstrip("?") in value:
                check(value[k.rstrip("?")], t, known, f"{where}.{k.rstrip('?')}")
        return
    if isinstance(want, list):
        if not isinstance(value, list):
            raise ValueError(f"{where}: {value!r} is no list")
        for i, v in enumerate(value):
            check(v, want[0], known, f"{where}[{i}]")
        return
    for alt in want.split("|"):
        if alt == "null" and value is None:
            return
        if alt == "int" and isinstance(value, int) and not isinstance(value, bool):
            return
        if alt == "num" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return
        if alt == "str" and isinstance(value, str):
            return
        if alt == "bool" and isinstance(value, bool):
            return
        if alt in known:
            try:
                check(value, known[alt], known, where)
                return
            except ValueError:
                pass
    raise ValueError(f"{where}: {value!r} is not {want}")


def main():
    known = shapes(sys.argv[1])
    want = sys.argv[2]
    if want not in known:
        sys.exit(f"no shape {want} in {sys.argv[1]}: {sorted(known)}")
    text = open(sys.argv[3]).read()
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not docs:
        sys.exit("no JSON document")
    try:
        for d in docs:
            check(d, known[want], known, want)
    except ValueError as e:
        sys.exit(str(e))


main()
