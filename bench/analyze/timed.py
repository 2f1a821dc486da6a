#!/usr/bin/python3
"""Runs a command several times and reports its best wall and CPU time.

    timed.py [--repeats N] [--stdout FILE] -- COMMAND...

CPU time is the child's own user + system time (wait4 rusage, microsecond resolution),
which a machine shared with other work disturbs much less than wall time. Prints one line
of JSON: wall_s, cpu_s, user_s (each the minimum over the runs), cpu_median_s and
wall_median_s, and the runs. The command's stdout of the last run goes to FILE
(default: discarded); its stdin is /dev/null. Exits 1 if any run fails.
"""
import json
import os
import statistics
import subprocess
import sys
import time


def main(argv):
    repeats, stdout_path = 1, os.devnull
    while argv and argv[0] != "--":
        if argv[0] == "--repeats":
            repeats, argv = int(argv[1]), argv[2:]
        elif argv[0] == "--stdout":
            stdout_path, argv = argv[1], argv[2:]
        else:
            sys.exit(f"timed.py: unknown option {argv[0]}")
    command = argv[1:]
    if not command:
        sys.exit("usage: timed.py [--repeats N] [--stdout FILE] -- COMMAND...")
    runs = []
    for _ in range(repeats):
        with open(stdout_path, "wb") as out:
            t0 = time.perf_counter()
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            sys.exit(f"timed.py: {' '.join(command)} exited with {child.returncode}")
        runs.append({"wall_s": wall, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
                     "cpu_s": usage.ru_utime + usage.ru_stime})
    print(json.dumps({
        "wall_s": min(r["wall_s"] for r in runs),
        "cpu_s": min(r["cpu_s"] for r in runs),
        "user_s": min(r["user_s"] for r in runs),
        "cpu_median_s": statistics.median(r["cpu_s"] for r in runs),
        "wall_median_s": statistics.median(r["wall_s"] for r in runs),
        "runs": runs,
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
