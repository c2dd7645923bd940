"""What the whole process shares, below every layer: native work that must end before the
interpreter finalizes (``native_work``: the key pool's key making, requests being answered, the
start-up preload; an ``atexit`` hook waits for them).

May import: the standard library only. Everything else may import it.
"""
