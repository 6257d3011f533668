"""The strict mode's knobs: defaults from the command line, overridden per table at run time over HTTP."""
import json
import math
import threading
from urllib.parse import unquote

from strict_moto.wsgi import respond_json


class Settings:
    """Each table's settings: the defaults, and what POST /_strict/tables/NAME changed for that table."""

    RANGES = {
        "stale_read_probability": (0.0, 1.0),
        "consistency_lag_ms": (0.0, None),
        "conflict_rate": (0.0, 1.0),
        "token_window_ms": (0.0, None),
        "transaction_latency_ms": (0.0, None),
        "partition_read_units": (0.0, None),
        "partition_write_units": (0.0, None),
        "burst_seconds": (0.0, None),
    }
    # Settings that are text: the partition-key prefix the per-key limits apply to ("": every key).
    TEXTS = ("throttled_key_prefix",)

    def __init__(self, defaults):
        self.defaults = self.validated(defaults)
        self._overrides = {}
        self._lock = threading.Lock()

    @classmethod
    def validated(cls, values):
        if not isinstance(values, dict):
            raise ValueError("expected a JSON object")
        unknown = sorted(set(values) - set(cls.RANGES) - set(cls.TEXTS))
        if unknown:
            raise ValueError(f"unknown settings {unknown}; known: {sorted(list(cls.RANGES) + list(cls.TEXTS))}")
        for name, value in values.items():
            if name in cls.TEXTS:
                if not isinstance(value, str):
                    raise ValueError(f"{name} must be a string")
                continue
            low, high = cls.RANGES[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a number")
            if value < low or (high is not None and value > high):
                raise ValueError(f"{name} must be between {low} and {high}" if high is not None
                                 else f"{name} must be at least {low}")
        return dict(values)

    def of(self, table_name):
        overrides = self._overrides.get(table_name)
        return {**self.defaults, **overrides} if overrides else self.defaults

    def override(self, table_name, values):
        values = self.validated(values)
        with self._lock:
            merged = {**self._overrides.get(table_name, {}), **values}
            self._overrides = {**self._overrides, table_name: merged}  # readers see one dict or the other
        return self.of(table_name)

    def reset(self, table_name):
        with self._lock:
            self._overrides = {name: v for name, v in self._overrides.items() if name != table_name}
        return self.of(table_name)


class SettingsEndpoint:
    """WSGI middleware that answers /_strict/... itself; nothing there reaches moto."""

    PREFIX = "/_strict"

    def __init__(self, app, settings, strict):
        self._app = app
        self._settings = settings
        self._strict = strict

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path != self.PREFIX and not path.startswith(self.PREFIX + "/"):
            return self._app(environ, start_response)
        method = environ.get("REQUEST_METHOD", "GET")
        if path.rstrip("/") == self.PREFIX:
            return respond_json(start_response, 200, {"strict": True, "defaults": self._settings.defaults}
                                if self._strict else {"strict": False})
        if not path.startswith(self.PREFIX + "/tables/") or len(path) == len(self.PREFIX + "/tables/"):
            return respond_json(start_response, 404, {"message": "try /_strict or /_strict/tables/{TableName}"})
        table_name = unquote(path[len(self.PREFIX + "/tables/"):])
        if method == "GET":
            settings = self._settings.of(table_name)
        elif not self._strict:
            if method not in ("POST", "DELETE"):
                return respond_json(start_response, 405, {"message": "GET, POST or DELETE"})
            return respond_json(start_response, 200, {
                "strict": False, "applied": False, "table": table_name,
                "message": "the launcher runs with --lenient: per-table settings change nothing"})
        elif method == "POST":
            try:
                settings = self._settings.override(table_name, json.loads(environ["launcher.body"] or b"{}"))
            except ValueError as invalid:
                return respond_json(start_response, 400, {"message": str(invalid)})
        elif method == "DELETE":
            settings = self._settings.reset(table_name)
        else:
            return respond_json(start_response, 405, {"message": "GET, POST or DELETE"})
        return respond_json(start_response, 200, {
            "strict": self._strict, "applied": self._strict, "table": table_name, "settings": settings})
