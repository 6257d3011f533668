"""patches.py: moto's methods replaced, and put back as they were."""
from strict_moto.patches import Patches


class Base:
    def inherited(self):
        return "base"


class Patched(Base):
    def own(self):
        return "own"


def test_wrap_stacksWrappers_andUndoPutsBackWhatTheClassHeld():
    patches = Patches()
    patches.wrap(Patched, "own", lambda original: lambda self: "outer " + original(self))
    patches.wrap(Patched, "own", lambda original: lambda self: "outermost " + original(self))
    patches.wrap(Patched, "inherited", lambda original: lambda self: "wrapped " + original(self))
    assert (Patched().own(), Patched().inherited()) == ("outermost outer own", "wrapped base")

    patches.undo()

    assert (Patched().own(), Patched().inherited()) == ("own", "base")
    assert "inherited" not in Patched.__dict__
