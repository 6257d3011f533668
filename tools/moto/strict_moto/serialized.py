"""The data lock: one request at a time into moto, each request's body read before it waits for the lock."""
import io
import threading

from strict_moto.wsgi import read_body, respond_json


class BodyFirst:
    """WSGI middleware that reads each request's body in full, then hands the app an in-memory copy.

    Done before the lock below: werkzeug's reader would otherwise block inside it, on a client that
    sent its headers and is slow to send the rest, and every other request would wait.
    """

    def __init__(self, app):
        self._app = app

    def __call__(self, environ, start_response):
        try:
            body = read_body(environ)
        except (OSError, ValueError):
            body = None
        if body is None:
            return respond_json(start_response, 400, {"message": "incomplete request body"})
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ["launcher.body"] = body
        return self._app(environ, start_response)


class SerializedApp:
    """WSGI middleware that lets one request at a time into the wrapped app."""

    def __init__(self, app, lock=None):
        self._app = app
        self._lock = lock if lock is not None else threading.Lock()

    def __call__(self, environ, start_response):
        with self._lock:
            result = self._app(environ, start_response)
            try:
                # Drain the body inside the lock: an app may do its work lazily while it is iterated.
                return [bytes(chunk) for chunk in result]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
