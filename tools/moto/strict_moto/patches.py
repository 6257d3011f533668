"""moto's methods the launcher replaces, recorded so that they can be put back.

The server never puts them back; the tests do, so that each builds its app on moto's own methods
instead of wrapping the previous test's wrappers.
"""

_ABSENT = object()


class Patches:

    def __init__(self):
        self._originals = []  # (owner, name, what the owner itself held, or _ABSENT), oldest first

    def wrap(self, owner, name, wrapper):
        """Replaces `owner.name` by `wrapper(current method)`."""
        self._originals.append((owner, name, owner.__dict__.get(name, _ABSENT)))
        setattr(owner, name, wrapper(getattr(owner, name)))

    def undo(self):
        """Puts back every replaced method, newest first."""
        while self._originals:
            owner, name, original = self._originals.pop()
            if original is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
