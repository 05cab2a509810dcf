#!/usr/bin/env python3
"""qemu_fw.py - run a bare-metal firmware on qemu-system-arm until it prints
"halt" (semihosting), then save its RAM and an ELF core through qemu's monitor.

  qemu_fw.py MACHINE ELF OUT RAMSTART RAMLEN RAM.bin CORE [QEMU-ARG...]

RAM.bin and CORE must be in one directory. OUT gets the firmware's semihosting output. The machine is stopped before
`pmemsave RAMSTART RAMLEN RAM.bin` (a raw dump, as a probe would take it) and
`dump-guest-memory CORE` (every RAM region of the board in one ELF core), then
qemu quits. Any further arguments go to qemu-system-arm (-icount shift=0
for a firmware whose timer interrupts must land at the same instructions on
every run). Exit 0 when both files were written; 1 (and why on stderr) when the
firmware did not halt within 60 seconds or printed "fault"."""
import os
import socket
import subprocess
import sys
import time


def wait_for(cond, secs):
    end = time.time() + secs
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def main():
    machine, elf, out, start, length, ram, core = sys.argv[1:8]
    extra = sys.argv[8:]
    mon = os.path.abspath(out + ".mon")
    wd = os.path.dirname(os.path.abspath(ram))
    for f in (out, mon, ram, core):
        if os.path.exists(f):
            os.unlink(f)
    q = subprocess.Popen(["qemu-system-arm", "-M", machine, "-nographic", "-serial", "none",
                          "-monitor", "unix:%s,server=on,wait=off" % mon,
                          "-chardev", "file,id=sh,path=%s" % os.path.abspath(out),
                          "-semihosting-config", "enable=on,target=native,chardev=sh",
                          "-kernel", os.path.abspath(elf)] + extra, cwd=wd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def said(word):
        return os.path.exists(out) and word in open(out).read()

    try:
        if not wait_for(lambda: said("halt\n") or said("fault"), 60) or said("fault"):
            sys.exit("%s: did not halt (%s)" % (elf, open(out).read().strip() if os.path.exists(out) else "no output"))
        if not wait_for(lambda: os.path.exists(mon), 10):
            sys.exit("%s: no monitor socket" % elf)
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(60)
        s.connect(mon)
        got = b""

        def prompt(got):
            # the monitor echoes each line and prints "(qemu) " when it waits for the next
            while not got.rstrip().endswith(b"(qemu)"):
                got += s.recv(4096)
            if os.environ.get("QFW_DEBUG"):
                print(repr(got[-300:]), file=sys.stderr)
            return b""

        got = prompt(got)
        # relative names, from qemu's directory: in "pmemsave ADDR SIZE /path" the
        # monitor reads "SIZE /path" as a division
        for cmd in ("stop", "pmemsave %s %s %s" % (start, length, os.path.relpath(ram, wd)),
                    "dump-guest-memory %s" % os.path.relpath(core, wd)):
            s.sendall((cmd + "\n").encode())
            got = prompt(got)
            if os.environ.get("QFW_DEBUG"): print(repr(got), file=sys.stderr)
        s.sendall(b"quit\n")
        q.wait(20)
    finally:
        if q.poll() is None:
            q.kill()
            q.wait()
    ok = os.path.exists(ram) and os.path.getsize(ram) == int(length, 0) and os.path.exists(core)
    if not ok:
        sys.exit("%s: qemu wrote no dump or no core" % elf)


if __name__ == "__main__":
    main()
