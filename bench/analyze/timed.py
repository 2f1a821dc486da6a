#!/usr/bin/python3
"""Runs commands several times, in turn, and reports each one's best and median times.

    timed.py [--repeats N] [--stdout FILE] -- COMMAND... [::: [--stdout FILE] COMMAND...]...

With several commands (separated by `:::`) the runs go in turn, A B C A B C ..., so a
drift in the machine's speed (another process starting on a shared host) falls on all of
them alike and their ratios stay fair; timing one command N times and then the next would
put the drift between them.

CPU time is the child's own user + system time (wait4 rusage, microsecond resolution),
which a machine shared with other work disturbs much less than wall time. Prints one line
of JSON per command, in the order given: wall_s, cpu_s, user_s (each the minimum over the
runs), cpu_median_s and wall_median_s, and the runs. A command's stdout of its last run
goes to its FILE (default: discarded); stdin is /dev/null. Exits 1 if any run fails.
"""
import json
import os
import statistics
import subprocess
import sys
import time


def parse(argv):
    repeats, stdout_path = 1, os.devnull
    while argv and argv[0] != "--":
        if argv[0] == "--repeats":
            repeats, argv = int(argv[1]), argv[2:]
        elif argv[0] == "--stdout":
            stdout_path, argv = argv[1], argv[2:]
        else:
            sys.exit(f"timed.py: unknown option {argv[0]}")
    commands, current = [], {"stdout": stdout_path, "argv": []}
    rest = argv[1:]
    while rest:
        word, rest = rest[0], rest[1:]
        if word == ":::":
            commands.append(current)
            current = {"stdout": os.devnull, "argv": []}
            if len(rest) >= 2 and rest[0] == "--stdout":
                current["stdout"], rest = rest[1], rest[2:]
        else:
            current["argv"].append(word)
    commands.append(current)
    if any(not c["argv"] for c in commands):
        sys.exit("usage: timed.py [--repeats N] [--stdout FILE] -- COMMAND... [::: [--stdout FILE] COMMAND...]...")
    return repeats, commands


def run_once(command, stdout_path):
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"timed.py: {' '.join(command)} exited with {code}")
    return {"wall_s": wall, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
            "cpu_s": usage.ru_utime + usage.ru_stime}


def main(argv):
    repeats, commands = parse(argv)
    runs = [[] for _ in commands]
    for _ in range(repeats):
        for i, c in enumerate(commands):
            runs[i].append(run_once(c["argv"], c["stdout"]))
    for r in runs:
        print(json.dumps({
            "wall_s": min(x["wall_s"] for x in r),
            "cpu_s": min(x["cpu_s"] for x in r),
            "user_s": min(x["user_s"] for x in r),
            "cpu_median_s": statistics.median(x["cpu_s"] for x in r),
            "wall_median_s": statistics.median(x["wall_s"] for x in r),
            "runs": r,
        }))


if __name__ == "__main__":
    main(sys.argv[1:])
