#!/usr/bin/env python3
# symcpu.py - CPU time (user + system, from wait4) and wall time of
# tests/tools/symdw builds naming the same distinct return addresses, with no
# cache and cold (writing the index cache into an emptied directory), the
# builds (and thread counts) run alternately so that the machine's load falls
# on each alike. For comparing two builds of the symbolizer (copy the old
# tests/tools/symdw aside first), or one build on 1 and 2 threads;
# bench/symbolizers.sh gives the instruction counts.
#
# usage: python3 bench/symcpu.py [-n ROUNDS] [-a ADDRS] [-t "1 2"]
#                                [--core CORE --addr-file F] PROG SYMDW...
#   PROG   the program to name addresses of (build/bench-symgen/26000/prog,
#          which bench/symbolizers.sh builds), or the program of CORE
#   ADDRS  how many distinct return addresses, spread over PROG [10000]
#   -t     thread counts ($MPROF_THREADS) to run every build with [the default:
#          the variable unset, every CPU]
#   --core, --addr-file  name the addresses in F (one per line) of CORE instead
# Prints, per build, thread count and mode, the median and the lowest CPU and
# wall seconds.
import os, shutil, statistics, subprocess, sys, tempfile, time

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
    args, rounds, n, threads, core, afile = sys.argv[1:], 11, 10000, [None], None, None
    while args and args[0] in ("-n", "-a", "-t", "--core", "--addr-file"):
        if args[0] == "-n":
            rounds = int(args[1])
        elif args[0] == "-a":
            n = int(args[1])
        elif args[0] == "-t":
            threads = args[1].split()
        elif args[0] == "--core":
            core = args[1]
        else:
            afile = args[1]
        args = args[2:]
    if len(args) < 2 or (core is None) != (afile is None):
        sys.exit("usage: symcpu.py [-n ROUNDS] [-a ADDRS] [-t THREADS] [--core CORE --addr-file F] PROG SYMDW...")
    prog, bins = args[0], args[1:]
    tmp = tempfile.mkdtemp(prefix="mprof-symcpu.")
    try:
        if afile:
            addrs = afile
            count = sum(1 for l in open(afile) if l.strip())
        else:
            rets = call_rets(prog)
            if not rets:
                sys.exit("symcpu: no call instructions in %s" % prog)
            step = max(1, len(rets) / n)
            pick = sorted({rets[int(i * step)] for i in range(min(n, len(rets)))})
            addrs = os.path.join(tmp, "addrs")
            with open(addrs, "w") as f:
                f.write("\n".join("0x%x" % a for a in pick) + "\n")
            count = len(pick)
        cache = os.path.join(tmp, "cache")
        res = {}
        for _ in range(rounds):
            for b in bins:
                for t in threads:
                    env = dict(os.environ)
                    env.pop("MPROF_THREADS", None)
                    if t is not None:
                        env["MPROF_THREADS"] = t
                    for mode in ("no cache", "cold"):
                        shutil.rmtree(cache, ignore_errors=True)
                        cmd = [b, "--quiet"] + (["--cache-dir", cache] if mode == "cold" else [])
                        cmd += ["--addr-file", addrs] + ([prog, core] if core else ["--raw-elf", prog])
                        t0 = time.monotonic()
                        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                        _, status, ru = os.wait4(p.pid, 0)
                        wall = time.monotonic() - t0
                        if status != 0:
                            sys.exit("symcpu: %s failed (status %d)" % (" ".join(cmd), status))
                        r = res.setdefault((b, t, mode), ([], []))
                        r[0].append(ru.ru_utime + ru.ru_stime)
                        r[1].append(wall)
        print("symcpu: %d addresses of %s, %d alternated rounds, CPU seconds (user + system) and wall seconds:"
              % (count, core or prog, rounds))
        for b in bins:
            for t in threads:
                for mode in ("no cache", "cold"):
                    cpu, wall = res[(b, t, mode)]
                    label = b if t is None else "%s, %s thread%s" % (b, t, "" if t == "1" else "s")
                    print("  %-52s %-8s CPU median %.3f lowest %.3f   wall median %.3f lowest %.3f"
                          % (label, mode, statistics.median(cpu), min(cpu), statistics.median(wall), min(wall)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

main()
