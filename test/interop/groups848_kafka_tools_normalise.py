"""Canonical form of a kafka-consumer-groups, kafka-share-groups or kafka-groups transcript
(groups848_kafka_tools_test.sh, share_kafka_tools_test.sh).

usage: groups848_kafka_tools_normalise.py TRANSCRIPT

The transcript is a sequence of "$ TOOL ARGS" lines, each followed by the
tool's output and "exit N". Blank lines are dropped. A table (a header line of capitals
and the rows under it, cells padded with spaces) becomes its cells split on whitespace
and joined with " | ", its rows sorted; in every line a member id (the CONSUMER-ID
column, 22 characters of base64url) becomes "<member-id>", a client host ("/127.0.0.1")
"<host>", and a broker's host:port "<host:port>". The stack trace lines ("\tat ...")
that the tool prints with an error are dropped: their line numbers are the JDK's. Other
lines are kept.
"""

import re
import sys

HEADER = re.compile(r"^(GROUP|TOPIC)\s+[A-Z#(]")
HOST_PORT = re.compile(r"^(localhost|\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:]+\]):\d+$")
HOST = re.compile(r"^/(\d+\.\d+\.\d+\.\d+|[0-9a-fA-F:]+)$")
MEMBER_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")


def cells(line, member_col):
    out = []
    for i, cell in enumerate(line.split()):
        if HOST_PORT.match(cell):
            cell = "<host:port>"
        elif HOST.match(cell):
            cell = "<host>"
        elif i == member_col and MEMBER_ID.match(cell):
            cell = "<member-id>"
        out.append(cell)
    return " | ".join(out)


def normalise_body(body):
    """Tables canonicalised; the other lines kept, with host:port pairs replaced."""
    out, rows, member_col = [], None, None

    def flush():
        if rows is not None:
            out.extend(sorted(rows))

    for line in body:
        if not line.strip():
            flush()
            rows = None
            continue
        if HEADER.match(line):
            flush()
            header = line.split()
            member_col = header.index("CONSUMER-ID") if "CONSUMER-ID" in header else None
            out.append(" | ".join(header))
            rows = []
        elif rows is not None:
            rows.append(cells(line, member_col))
        else:
            out.append(re.sub(r"(localhost|\d+\.\d+\.\d+\.\d+):\d+", "<host:port>", line.rstrip()))
    flush()
    return out


def normalise(path):
    cmd, body = None, []
    for line in open(path).read().splitlines():
        if line.startswith("$ "):
            cmd, body = line, []
        elif re.fullmatch(r"exit \d+", line) and cmd is not None:
            print(cmd)
            for out in normalise_body(body):
                print(out)
            print(line)
            cmd = None
        elif cmd is not None and not line.startswith("\tat "):
            body.append(line)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    normalise(sys.argv[1])
