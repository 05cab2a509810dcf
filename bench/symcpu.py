#!/usr/bin/env python3
# symcpu.py - CPU time (user + system, from wait4) of tests/tools/symdw builds
# naming the same distinct return addresses of one program, with no cache and
# cold (writing the index cache into an emptied directory), the builds run
# alternately so that the machine's load falls on each alike. For comparing
# two builds of the symbolizer (copy the old tests/tools/symdw aside first);
# bench/symbolizers.sh gives the wall times and instruction counts.
#
# usage: python3 bench/symcpu.py [-n ROUNDS] [-a ADDRS] PROG SYMDW...
#   PROG   the program to name addresses of (build/bench-symgen/26000/prog,
#          which bench/symbolizers.sh builds)
#   ADDRS  how many distinct return addresses, spread over PROG [10000]
# Prints, per build and mode, the median and the lowest CPU seconds.
import os, shutil, statistics, subprocess, sys, tempfile

def call_rets(prog):
    """The address after every call instruction of prog (a return address)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", prog], capture_output=True, text=True).stdout
    rets, want = set(), False
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 2 or not f[0].strip().endswith(":"):
            continue
        a = int(f[0].strip()[:-1], 16)
        if want:
            rets.add(a)
            want = False
        if f[1].startswith("call"):
            want = True
    return sorted(rets)

def main():
    args, rounds, n = sys.argv[1:], 11, 10000
    while args and args[0] in ("-n", "-a"):
        if args[0] == "-n":
            rounds = int(args[1])
        else:
            n = int(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit("usage: symcpu.py [-n ROUNDS] [-a ADDRS] PROG SYMDW...")
    prog, bins = args[0], args[1:]
    rets = call_rets(prog)
    if not rets:
        sys.exit("symcpu: no call instructions in %s" % prog)
    step = max(1, len(rets) / n)
    pick = sorted({rets[int(i * step)] for i in range(min(n, len(rets)))})
    tmp = tempfile.mkdtemp(prefix="mprof-symcpu.")
    try:
        addrs = os.path.join(tmp, "addrs")
        with open(addrs, "w") as f:
            f.write("\n".join("0x%x" % a for a in pick) + "\n")
        cache = os.path.join(tmp, "cache")
        res = {}
        for _ in range(rounds):
            for b in bins:
                for mode in ("no cache", "cold"):
                    shutil.rmtree(cache, ignore_errors=True)
                    cmd = [b, "--quiet"] + (["--cache-dir", cache] if mode == "cold" else [])
                    cmd += ["--addr-file", addrs, "--raw-elf", prog]
                    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    _, status, ru = os.wait4(p.pid, 0)
                    if status != 0:
                        sys.exit("symcpu: %s failed (status %d)" % (" ".join(cmd), status))
                    res.setdefault((b, mode), []).append(ru.ru_utime + ru.ru_stime)
        print("symcpu: %d addresses of %s, %d alternated rounds, CPU seconds (user + system):" % (len(pick), prog, rounds))
        for b in bins:
            for mode in ("no cache", "cold"):
                v = res[(b, mode)]
                print("  %-40s %-8s median %.3f  lowest %.3f" % (b, mode, statistics.median(v), min(v)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

main()
