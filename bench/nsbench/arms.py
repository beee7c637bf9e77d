"""The allocator arms: which executable and environment runs each allocator,
and which of them 'mimalloc' stands for in a ratio."""
import os
import sys

from .workloads import DEBIAN_MIMALLOC, MODULE_SHAPES, PEERS


class Arm:
    """One allocator as a benchmark executable (+ environment)."""

    def __init__(self, label, exe, env=None, expect=None, null=False):
        self.label, self.exe, self.env, self.expect, self.null = label, exe, env or {}, expect, null


def peer_libs(peers_dir):
    """(label, library) of every prebuilt peer present; a note when none is."""
    found = [(label, os.path.join(peers_dir, rel)) for label, rel in PEERS
             if os.path.exists(os.path.join(peers_dir, rel))]
    if not found:
        print("run.py: note: no prebuilt peers in %s: the mimalloc 2.4.1 and 3.4.3 arms are "
              "skipped and 'mimalloc' below means Debian's %s" % (peers_dir, DEBIAN_MIMALLOC),
              file=sys.stderr)
    return found


def kernel_arms(cfg, peers):
    """Kernel executables; the prebuilt peers are preloaded into the glibc
    executable (their malloc replaces libc's, as the issue measured them)."""
    arms = cfg["arms"]
    out = [Arm("nsalloc", arms["nsalloc"], expect="libbench-arm-nsalloc"),
           Arm("nsalloc-override", arms["glibc"], {"LD_PRELOAD": cfg["override"]},
               expect="libnsalloc-override"),
           Arm("glibc", arms["glibc"], expect="libc.so")]
    if "mimalloc" in arms:
        out.append(Arm(DEBIAN_MIMALLOC, arms["mimalloc"], expect="libmimalloc.so.2"))
    for label, lib in peers:
        out.append(Arm(label, arms["glibc"], {"LD_PRELOAD": lib}, os.path.basename(lib)))
    for name in ("jemalloc", "tcmalloc"):
        if name in arms:
            out.append(Arm(name, arms[name], expect="lib" + name))
    out.append(Arm("null", arms["nsalloc"], expect="libbench-arm-nsalloc", null=True))
    return out


def module_arms(cfg, peers, override):
    """The module arm: bench-module dlopen()s one module per arm. nsalloc's
    private copy always; mimalloc's modules where the build made them and the
    runner's peers (--peers) are present, so hiding the peers hides them.
    Last, `override` (the nsalloc-override kernel arm), for the ratio of the
    private copy to it at the module arm's lengths."""
    modules, exe = cfg.get("modules", {}), cfg["arms"].get("module")
    if not exe:
        return []
    out = [Arm("nsalloc-module", exe, {"BENCH_MODULE": modules["nsalloc"]},
               expect="libbench-arm-nsalloc")]
    for label, lib in peers:
        for shape in MODULE_SHAPES:
            key = "%s-%s" % (label, shape)
            if key in modules:
                # The .so shape's malloc lives in the peer's library itself.
                expect = os.path.basename(lib) if shape == "so" else os.path.basename(modules[key])
                out.append(Arm(key, exe, {"BENCH_MODULE": modules[key]}, expect))
    if len(out) == 1:
        print("run.py: note: no mimalloc modules (the prebuilt peers are absent, or were when "
              "the build was configured): the module arm runs nsalloc alone, without ratios",
              file=sys.stderr)
    return out + [override]


def program_arms(cfg, peers):
    """Whole programs: every allocator by LD_PRELOAD; glibc is no preload."""
    out = [Arm("nsalloc", None, {"LD_PRELOAD": cfg["override"]}, "libnsalloc-override"),
           Arm("glibc", None, {}, "libc.so")]
    libs = [(DEBIAN_MIMALLOC, cfg.get("mimalloc_lib"))] + peers
    libs += [(name, cfg.get(name + "_lib")) for name in ("jemalloc", "tcmalloc")]
    for label, lib in libs:
        if lib:
            lib = os.path.realpath(lib)
            out.append(Arm(label, None, {"LD_PRELOAD": lib}, os.path.basename(lib)))
    out.append(Arm("null", None, {"LD_PRELOAD": cfg["override"]}, "libnsalloc-override", True))
    return out


def mimalloc_refs(labels):
    """The arms 'mimalloc' stands for: the newest releases when present, else
    Debian's. Every ratio to 'mimalloc' is to the better of them."""
    refs = [label for label, _ in PEERS if label in labels]
    return refs or [l for l in [DEBIAN_MIMALLOC] if l in labels]


def add_best_mimalloc(results, refs, key):
    """Adds a 'mimalloc' entry to every row: the reference arm with the
    lowest `key` (instructions), named in its 'best_of'."""
    for by_arm in results.values():
        have = [l for l in refs if key in by_arm.get(l, {})]
        if have:
            best = min(have, key=lambda l: by_arm[l][key])
            by_arm["mimalloc"] = dict(by_arm[best], best_of=best)
    return results
