"""serialized.py: the data lock, and each body read in full before it."""
import io
import threading

from strict_moto.serialized import BodyFirst, SerializedApp


class RecordingLock:
    """A lock that writes down when it is waited for, taken and released."""

    def __init__(self, events):
        self._lock = threading.Lock()
        self._events = events
        self.waiting = {}  # thread name -> Event set once that thread waits for the lock

    def __enter__(self):
        name = threading.current_thread().name
        self._events.append(("waiting", name))
        self.waiting.setdefault(name, threading.Event()).set()
        self._lock.acquire()
        self._events.append(("taken", threading.current_thread().name))

    def __exit__(self, *exc):
        self._events.append(("released", threading.current_thread().name))
        self._lock.release()


class LazyResult:
    """A WSGI result that does its work while it is iterated, as a streaming app does."""

    def __init__(self, events):
        self._events = events

    def __iter__(self):
        self._events.append(("chunk", threading.current_thread().name))
        yield b"one"
        self._events.append(("chunk", threading.current_thread().name))
        yield b"two"

    def close(self):
        self._events.append(("closed", threading.current_thread().name))


def environ(body=b"", **extra):
    return {"wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body)), "REQUEST_METHOD": "POST", **extra}


def test_serializedApp_drainsAndClosesTheResult_beforeReleasingTheLock():
    events = []
    app = SerializedApp(lambda env, start: LazyResult(events), lock=RecordingLock(events))

    assert app(environ(), None) == [b"one", b"two"]

    assert [e for e, _ in events] == ["waiting", "taken", "chunk", "chunk", "closed", "released"]


def test_serializedApp_letsASecondRequestIn_onlyOnceTheFirstHasFinished():
    events = []
    first_inside, let_first_finish = threading.Event(), threading.Event()

    def inner(env, start):
        name = threading.current_thread().name
        events.append(("inside", name))
        if name == "first":
            first_inside.set()
            assert let_first_finish.wait(5)
        events.append(("done", name))
        return [b""]

    lock = RecordingLock(events)
    lock.waiting["second"] = threading.Event()
    app = SerializedApp(inner, lock=lock)
    first = threading.Thread(target=app, args=(environ(), None), name="first")
    second = threading.Thread(target=app, args=(environ(), None), name="second")
    first.start()
    assert first_inside.wait(5)
    second.start()
    assert lock.waiting["second"].wait(5)
    assert ("inside", "second") not in events
    let_first_finish.set()
    first.join(5)
    second.join(5)

    assert events.index(("released", "first")) < events.index(("taken", "second")) < events.index(("inside", "second"))


def test_bodyFirst_handsTheAppTheWholeBody_inMemory():
    seen = {}

    def inner(env, start):
        seen["read"] = env["wsgi.input"].read()
        seen["kept"] = env["launcher.body"]
        seen["length"] = env["CONTENT_LENGTH"]
        return [b""]

    BodyFirst(inner)(environ(b'{"TableName": "t"}'), None)

    assert seen == {"read": b'{"TableName": "t"}', "kept": b'{"TableName": "t"}', "length": "18"}


def test_bodyFirst_readsAChunkedBody_toItsEnd():
    seen = {}

    def inner(env, start):
        seen["body"] = env["launcher.body"]
        return [b""]

    env = {"wsgi.input": io.BytesIO(b"chunked body"), "wsgi.input_terminated": True}
    BodyFirst(inner)(env, None)

    assert seen["body"] == b"chunked body"


def test_bodyFirst_answers400_withoutCallingTheApp_whenTheClientStopsBeforeItsBodyEnds():
    called = []
    statuses = []
    env = {"wsgi.input": io.BytesIO(b"short"), "CONTENT_LENGTH": "100"}

    answer = BodyFirst(lambda e, s: called.append(e))(env, lambda status, headers: statuses.append(status))

    assert called == []
    assert statuses == ["400 Bad Request"]
    assert b"incomplete request body" in b"".join(answer)
