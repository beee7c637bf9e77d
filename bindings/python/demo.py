"""make demo, the CPython scene. Run by nsalloc-python:

    nsalloc-python bindings/python/demo.py BUILD/bindings/python/modules
"""
import os
import subprocess
import sys
import sysconfig
import textwrap

import nsalloc

MODULES = sys.argv[1]
PYTHON3 = os.path.join(sysconfig.get_config_var("BINDIR"), "python3")


def child(code):
    """Run code in the plain python3 with the extension modules on its path."""
    env = dict(os.environ, PYTHONPATH=MODULES)
    return subprocess.run([PYTHON3, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True)


print(f"1. nsalloc-python: copy {nsalloc.prefix} installed in {nsalloc.installed()} "
      "before the interpreter started")
words = [str(i) * 3 for i in range(100000)]
copy = nsalloc.stats()["copy"]
print(f"   100000 new strings, all in the copy: {all(nsalloc.owns(id(w)) for w in words)}; "
      f"blocks pymalloc holds: {sys.getallocatedblocks()}")
print(f"   copy: {copy['in_use_blocks']} blocks, {copy['in_use_bytes'] >> 20} MiB in use, "
      f"peak pages {copy['peak_page_bytes'] >> 20} MiB")

print("\n2. A running python3: install nsalloc late (wrapping pymalloc), then a second module's")
print("   copy on top; every block freed through the top travels down to its owner")
result = child("""
    import nsalloc, nsalloc_twin
    early = [str(i) for i in range(50000)]            # pymalloc's
    nsalloc.install()
    middle = [str(i) for i in range(50000)]           # nsalloc's
    nsalloc_twin.install()
    late = [str(i) for i in range(50000)]             # nsalloc_twin's
    print("   owners (nsalloc, nsalloc_twin): early", (nsalloc.owns(id(early[-1])),
          nsalloc_twin.owns(id(early[-1]))), "middle", (nsalloc.owns(id(middle[-1])),
          nsalloc_twin.owns(id(middle[-1]))), "late", (nsalloc.owns(id(late[-1])),
          nsalloc_twin.owns(id(late[-1]))))
    del early, middle, late
    for module in (nsalloc_twin, nsalloc):
        obj = module.stats()["obj"]
        print(f"   {module.__name__:12} forwarded {obj['forwarded_frees']:6} frees down the chain")
""")
print(result.stdout + result.stderr, end="")

print("\n3. Negative control: the top copy installed without forwarding meets a block it")
print("   does not own - its foreign-pointer policy stops the process")
result = child("""
    import nsalloc, nsalloc_twin
    early = [str(i) for i in range(1000)]
    nsalloc_twin.install(forward=False)
    del early
""")
caught = [line for line in result.stderr.splitlines() if "nsalloc[" in line]
print(f"   child exit status {result.returncode}; {caught[0] if caught else 'NOT caught'}")
