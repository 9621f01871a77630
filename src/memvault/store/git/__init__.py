"""Git, and nothing else runs it: ``process`` starts git (the hook environment stripped,
stdin written while output is read), ``ops`` is every git call memvault makes (commits
through plumbing, HEAD read without a process, history), ``status`` says which memory
files can differ from what a cache read at a commit, ``early`` starts a new process's
``git status`` as soon as the command line names the vault.

May import what :mod:`memvault.store` may.
"""
