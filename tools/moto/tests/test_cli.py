"""cli.py: the flags, their defaults and their bounds."""
import pytest

from strict_moto.cli import parse_args, strict_defaults


def test_defaults_areDynamoDBs():
    args = parse_args([])

    assert (args.host, args.port, args.plain, args.lenient, args.count_keys) == ("127.0.0.1", 5000, False, False, False)
    assert strict_defaults(args) == {
        "stale_read_probability": 1.0,
        "consistency_lag_ms": 200.0,
        "conflict_rate": 0.0,
        "token_window_ms": 600_000.0,
        "transaction_latency_ms": 0.0,
        "partition_write_units": 1000.0,
        "partition_read_units": 3000.0,
        "burst_seconds": 1.0,
        "throttled_key_prefix": "",
    }


def test_tokenWindow_isGivenInSeconds_andKeptInMilliseconds():
    assert strict_defaults(parse_args(["--token-window-seconds", "1.5"]))["token_window_ms"] == 1500.0


@pytest.mark.parametrize("flags", [
    ["--conflict-rate", "1.1"],
    ["--stale-read-probability", "-0.1"],
    ["--consistency-lag-ms", "-1"],
    ["--transaction-latency-ms", "inf"],
    ["--partition-write-units", "-1"],
])
def test_outOfRangeFlags_areRefused(flags, capsys):
    with pytest.raises(SystemExit):
        parse_args(flags)
    assert "error" in capsys.readouterr().err
