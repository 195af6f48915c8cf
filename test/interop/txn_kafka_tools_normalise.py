"""Canonical form of a kafka-transactions transcript (txn_kafka_tools_test.sh).

usage: txn_kafka_tools_normalise.py TRANSCRIPT

The transcript is a sequence of "$ transactions ARGS" lines, each followed by the tool's
output and "exit N". Tables (tab-separated, cells padded) keep their header; each cell is
trimmed, a ProducerId becomes "pid(TXN_ID)" for the transactional id that the transcript's
list tables give it ("pid(?)" when none does), the numbers that are times
(LastTimestamp, CurrentTransactionStartTimeMs, TransactionDurationMs) become "<time>",
and the rows are sorted. Other lines are kept, with the deadlines and attempt counts of
an admin client's timeout message taken out.
"""

import re
import sys

TIMES = {"LastTimestamp", "CurrentTransactionStartTimeMs", "TransactionDurationMs"}


def sections(lines):
    """(command, output lines, exit line) for every command of the transcript."""
    out, cmd, body = [], None, []
    for line in lines:
        if line.startswith("$ "):
            cmd, body = line, []
        elif re.fullmatch(r"exit \d+", line) and cmd is not None:
            out.append((cmd, body, line))
            cmd = None
        elif cmd is not None:
            body.append(line)
    return out


def table(body):
    """Header and rows when BODY starts with a tab-separated table, else None."""
    if not body or "\t" not in body[0]:
        return None
    split = [[c.strip() for c in line.rstrip("\t").split("\t")] for line in body if "\t" in line]
    rest = [line for line in body if "\t" not in line]
    return split[0], split[1:], rest


def producer_names(parsed):
    names = {}
    for cmd, body, _ in parsed:
        t = table(body)
        if not cmd.startswith("$ transactions list") or t is None:
            continue
        header, rows, _ = t
        for row in rows:
            cells = dict(zip(header, row))
            names[cells.get("ProducerId")] = cells.get("TransactionalId")
    return names


def normalise(path):
    parsed = sections(open(path).read().splitlines())
    names = producer_names(parsed)
    for cmd, body, exit_line in parsed:
        print(cmd)
        t = table(body)
        if t is None:
            for line in body:
                print(re.sub(r"deadlineMs=\d+|tries=\d+|nextAllowedTryMs=\d+|at \d+ after \d+", "<n>", line))
        else:
            header, rows, rest = t
            print(" | ".join(header))
            canon = []
            for row in rows:
                cells = []
                for name, cell in zip(header, row):
                    if name == "ProducerId":
                        cell = f"pid({names.get(cell, '?')})"
                    elif name in TIMES and re.fullmatch(r"-?\d+", cell):
                        cell = "<time>"
                    cells.append(cell)
                canon.append(" | ".join(cells))
            for line in sorted(canon):
                print(line)
            for line in rest:
                print(line)
        print(exit_line)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    normalise(sys.argv[1])
