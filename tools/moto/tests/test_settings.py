"""settings.py: per-table settings over /_strict, validated, and inert when the launcher is lenient."""
import pytest

from strict_moto.settings import Settings

DEFAULTS = {"stale_read_probability": 1.0, "consistency_lag_ms": 200.0}


def test_override_mergesIntoTheTablesSettings_andResetRestoresTheDefaults():
    settings = Settings(DEFAULTS)
    settings.override("t", {"consistency_lag_ms": 50})
    settings.override("t", {"stale_read_probability": 0.5})

    assert settings.of("t") == {"stale_read_probability": 0.5, "consistency_lag_ms": 50}
    assert settings.of("other") == DEFAULTS
    assert settings.reset("t") == DEFAULTS


@pytest.mark.parametrize("values, message", [
    ([], "expected a JSON object"),
    ({"lag": 1}, "unknown settings ['lag']"),
    ({"conflict_rate": True}, "conflict_rate must be a number"),
    ({"conflict_rate": float("nan")}, "conflict_rate must be a number"),
    ({"conflict_rate": 1.5}, "conflict_rate must be between 0.0 and 1.0"),
    ({"token_window_ms": -1}, "token_window_ms must be at least 0.0"),
])
def test_validated_refusesWhatIsNotASetting(values, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Settings.validated(values)


def test_endpoint_overridesShowsAndResetsATablesSettings(launch):
    dynamo = launch()

    status, answer = dynamo.http("POST", "/_strict/tables/orders", {"conflict_rate": 0.25})
    assert status == 200
    assert answer["applied"] is True and answer["settings"]["conflict_rate"] == 0.25
    assert dynamo.http("GET", "/_strict/tables/orders")[1]["settings"]["conflict_rate"] == 0.25
    assert dynamo.http("DELETE", "/_strict/tables/orders")[1]["settings"]["conflict_rate"] == 0.0
    answer = dynamo.http("GET", "/_strict")[1]
    assert answer["strict"] is True and answer["defaults"]["conflict_rate"] == 0.0


@pytest.mark.parametrize("method, path, body, status", [
    ("POST", "/_strict/tables/orders", {"conflict_rate": 2}, 400),
    ("PUT", "/_strict/tables/orders", {}, 405),
    ("GET", "/_strict/tables/", None, 404),
    ("GET", "/_strict/other", None, 404),
])
def test_endpoint_refusesWhatItCannotDo(launch, method, path, body, status):
    assert launch().http(method, path, body)[0] == status


def test_lenientLauncher_answersButAppliesNothing(launch):
    dynamo = launch(lenient=True)

    status, answer = dynamo.http("POST", "/_strict/tables/orders", {"conflict_rate": 1.0})

    assert status == 200 and answer["applied"] is False
    assert dynamo.http("GET", "/_strict")[1] == {"strict": False}
