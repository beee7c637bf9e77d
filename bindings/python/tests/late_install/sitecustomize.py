"""Installs the nsalloc module's copy while Python starts (site imports
sitecustomize), for regrtest_compare.py's late-install run. Put this
directory and the module's on PYTHONPATH; child interpreters inherit it, and
every subinterpreter runs it again (install() is then a no-op)."""
import nsalloc

nsalloc.install()
