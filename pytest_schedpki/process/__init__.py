"""What the whole process shares, below every layer: native work that must end before the
interpreter finalizes (``native_work``: the key pool's key making, requests being answered, the
start-up preload; an ``atexit`` hook waits for them), long waits a listener need not count against
its connection-thread bound (``parking``: a blocking query announces it, the listener's hook acts),
and library warnings that must not reach a test suite's warning filters while the double reads a
client's input (``library_warnings``), and the garbage collector paused around the double's own
start-up work and given back as it was (``collector``).

May import: the standard library only. Everything else may import it.
"""
